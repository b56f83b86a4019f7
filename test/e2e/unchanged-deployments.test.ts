/**
 * An unchanged deployment is not rendered again, as in Fleet (a BundleDeployment is re-rendered only
 * when its deploymentID changes): a chart that generates a password with randAlphaNum keeps it over
 * three `up`s, `preview --expect-no-changes` passes, and the Secret is never written again. A real
 * change (a new deploymentID) renders afresh, and `lookup` (read from the cluster, as on the agent)
 * keeps the password across that upgrade.
 */
import { expect } from "chai";
import { kubeGet } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { liveStack } from "../support/live-stack";

const NS = "unchanged-test";
const secretPath = `/api/v1/namespaces/${NS}/secrets/generated`;
const CHART = {
  "app/Chart.yaml": "apiVersion: v2\nname: random\nversion: 0.1.0\n",
  "app/values.yaml": "replicas: 1\n",
  // The way popular charts keep a generated password: lookup the existing Secret, else generate one.
  "app/templates/secret.yaml":
    '{{- $existing := lookup "v1" "Secret" .Release.Namespace "generated" }}\n' +
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: generated\nstringData:\n" +
    '  password: {{ if $existing }}{{ index $existing.data "password" | b64dec | quote }}{{ else }}{{ randAlphaNum 24 | quote }}{{ end }}\n',
  "app/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  replicas: {{ .Values.replicas | quote }}\n",
  "app/fleet.yaml": `defaultNamespace: ${NS}\n`,
};

describe("an unchanged deployment keeps what it deployed (random values, no churn) on a live cluster", function () {
  this.timeout(10 * 60_000);
  const s = liveStack("unchanged", { namespace: NS, paths: ["app"], files: CHART });

  it("three ups of a random-password chart leave the Secret as first written; a preview expects no changes", async () => {
    await ops.up(s.options());
    const first = await kubeGet(s.cluster, secretPath);
    for (let i = 0; i < 2; i++) {
      const again = await ops.up(s.options());
      expect(again.events, `up ${i + 2}`).to.deep.equal([]);
    }
    const third = await kubeGet(s.cluster, secretPath);
    expect(third.metadata.resourceVersion).to.equal(first.metadata.resourceVersion);
    expect(third.data.password).to.equal(first.data.password);
    await ops.preview(s.options({ expectNoChanges: true }));
  });

  it("a values change is a new deploymentID: rendered afresh and deployed, and lookup keeps the password", async () => {
    const before = (await kubeGet(s.cluster, secretPath)).data.password;
    s.write("app/fleet.yaml", `defaultNamespace: ${NS}\nhelm:\n  values:\n    replicas: 2\n`);
    const changed = await ops.up(s.options());
    expect(changed.events.map((e) => `${e.event} ${e.bundle}`)).to.deep.equal(["deployed unchanged-app"]);
    expect((await kubeGet(s.cluster, `/api/v1/namespaces/${NS}/configmaps/settings`)).data).to.deep.equal({ replicas: "2" });
    expect((await kubeGet(s.cluster, secretPath)).data.password).to.equal(before);
  });
});
