/**
 * fleet.yaml `helm.valuesFrom` on a live cluster (issue 43): values from a ConfigMap and a Secret on
 * the target cluster, read with the deploying identity, merged over fleet.yaml's values as Fleet's agent
 * merges them. A changed ConfigMap value redeploys on the next up, an unchanged one does not; a missing
 * key fails that pair alone in Fleet's words, and so does a Secret the bundle's serviceAccount may not
 * read, while the other bundle deploys; the Secret's value is in no preview output, summary, failure or
 * `stack export`.
 */
import { expect } from "chai";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { openStack, runCli } from "../../automation/engine/stack";
import { liveStack } from "../support/live-stack";
import { configMapsOnlyAccount } from "../support/restricted-account";

// The agent's namespace (where Fleet finds the serviceAccount) and the bundles' namespace.
const NS = "values-from-e2e";
const PASSWORD = "vf-pw-s3cret-4711";
const SECRET_YAML = `db:\n  password: ${PASSWORD}\n`;
const b64 = (s: string) => Buffer.from(s).toString("base64");
const chart = (name: string, fleetYaml: string, template: string) => ({
  [`${name}/Chart.yaml`]: `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`,
  [`${name}/templates/t.yaml`]: template,
  [`${name}/fleet.yaml`]: `defaultNamespace: ${NS}\n${fleetYaml}`,
});
const FILES = {
  ...chart(
    "app",
    "helm:\n  values: {greeting: from-fleet-yaml, kept: from-fleet-yaml}\n  valuesFrom:\n  - configMapKeyRef: {name: vf-settings}\n  - secretKeyRef: {name: vf-creds, key: secret.yaml}\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vf-out\ndata:\n  greeting: {{ .Values.greeting | quote }}\n  kept: {{ .Values.kept | quote }}\n---\n" +
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: vf-out\nstringData:\n  password: {{ .Values.db.password | quote }}\n",
  ),
  ...chart(
    "missing",
    "helm:\n  valuesFrom:\n  - configMapKeyRef: {name: vf-settings, key: absent.yaml}\n",
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vf-missing\ndata:\n  greeting: {{ .Values.greeting | default "none" | quote }}\n',
  ),
  // The account may read and write ConfigMaps only: its read of the Secret is refused, as Fleet's agent's would be.
  ...chart(
    "restricted",
    "serviceAccount: deployer\nhelm:\n  valuesFrom:\n  - secretKeyRef: {name: vf-creds, key: secret.yaml}\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vf-restricted\ndata:\n  password: {{ .Values.db.password | quote }}\n",
  ),
};

describe("helm.valuesFrom on a live cluster: read there as the deploying identity, merged as Fleet's agent merges it", function () {
  this.timeout(10 * 60_000);
  const settings = (greeting: string) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "vf-settings", namespace: NS },
    data: { "values.yaml": `greeting: ${greeting}\n` },
  });
  const s = liveStack("valuesfrom", {
    namespace: NS,
    paths: ["app", "missing", "restricted"],
    files: FILES,
    agent: { namespace: NS },
    setup: async ({ cluster }) => {
      await configMapsOnlyAccount(cluster, NS, "deployer");
      await kubeRequest(cluster, "POST", `/api/v1/namespaces/${NS}/configmaps`, { body: settings("from-the-cluster") });
      await kubeRequest(cluster, "POST", `/api/v1/namespaces/${NS}/secrets`, {
        body: { apiVersion: "v1", kind: "Secret", metadata: { name: "vf-creds", namespace: NS }, data: { "secret.yaml": b64(SECRET_YAML) } },
      });
    },
  });
  const leaks = (text: string) => [PASSWORD, b64(PASSWORD), b64(SECRET_YAML)].filter((v) => text.includes(v));
  /** An up whose failures are the test's to check: its events, failures and output. */
  const up = async () => {
    let output = "";
    try {
      const r = await ops.up(
        s.options({
          onOutput: (t) => {
            output += t;
          },
        }),
      );
      return { events: r.events, failures: [] as ops.BundlesFailedError["failures"], message: "", output };
    } catch (err) {
      if (!(err instanceof ops.BundlesFailedError)) throw err;
      return { events: err.events, failures: err.failures, message: err.message, output };
    }
  };
  const deployed = (events: { event: string; bundle: string }[]) => events.map((e) => `${e.event} ${e.bundle}`);
  const FLEET_MISSING_KEY = `key absent.yaml is missing from configmap ${NS}/vf-settings, can't use it in valuesFrom`;
  const FORBIDDEN = `secrets "vf-creds" is forbidden: User "system:serviceaccount:${NS}:deployer" cannot get resource "secrets"`;

  it("the preview: a missing key and a Secret the account may not read fail their pairs in Fleet's words; the value is in no output, summary or failure", async () => {
    let output = "";
    const preview = await ops.preview(
      s.options({
        onOutput: (t) => {
          output += t;
        },
      }),
    );
    const failures = Object.fromEntries(preview.failures.map((f) => [f.bundle, f.message]));
    expect(Object.keys(failures).sort()).to.deep.equal(["valuesfrom-missing", "valuesfrom-restricted"]);
    expect(failures["valuesfrom-missing"]).to.contain(`helm.valuesFrom: ${FLEET_MISSING_KEY}`);
    expect(failures["valuesfrom-restricted"]).to.contain(FORBIDDEN);
    expect(leaks(output), "preview output").to.deep.equal([]);
    expect(leaks(preview.summaryMarkdown), "summary").to.deep.equal([]);
    expect(leaks(JSON.stringify(preview.failures)), "failures").to.deep.equal([]);
  });

  it("up deploys the values read from the cluster over fleet.yaml's, the others fail alone; the state holds the Secret's value only encrypted", async () => {
    const r = await up();
    expect(r.failures.map((f) => f.bundle).sort()).to.deep.equal(["valuesfrom-missing", "valuesfrom-restricted"]);
    expect(deployed(r.events)).to.deep.equal(["deployed valuesfrom-app"]);
    expect(leaks(r.message), "up's failure").to.deep.equal([]);
    expect(leaks(r.output), "up output").to.deep.equal([]);
    expect((await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/vf-out`)).data).to.deep.equal({
      greeting: "from-the-cluster",
      kept: "from-fleet-yaml",
    });
    expect(Buffer.from((await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/secrets/vf-out`)).data.password, "base64").toString()).to.equal(PASSWORD);
    expect(await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/vf-missing`)).to.equal(undefined);
    expect(await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/vf-restricted`)).to.equal(undefined);
    // `pulumi stack export` without --show-secrets, as anyone with the state backend but not the passphrase sees it.
    const state = await runCli(await openStack(s.options()), ["stack", "export", "--stack", "valuesfrom"]);
    const app = JSON.parse(state).deployment.resources.find((x: { urn: string }) => x.urn.endsWith(`::${s.cluster.name}/valuesfrom/valuesfrom-app`));
    expect(Object.keys(app.inputs.objects)).to.include("ciphertext");
    expect(leaks(state), "stack export").to.deep.equal([]);
  });

  it("an unchanged value redeploys nothing; a changed ConfigMap value redeploys that pair on the next up", async () => {
    const again = await up();
    expect(deployed(again.events), "unchanged").to.deep.equal([]);
    await kubeRequest(s.cluster, "PUT", `/api/v1/namespaces/${NS}/configmaps/vf-settings`, { body: settings("changed-on-the-cluster") });
    const changed = await up();
    expect(deployed(changed.events)).to.deep.equal(["deployed valuesfrom-app"]);
    expect((await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/vf-out`)).data).to.deep.equal({
      greeting: "changed-on-the-cluster",
      kept: "from-fleet-yaml",
    });
    expect(leaks(changed.output), "up output").to.deep.equal([]);
    expect(deployed((await up()).events), "unchanged again").to.deep.equal([]);
  });
});
