/**
 * `lookup` on a live cluster (issue 41): it stays in the GitRepo's namespaces, and what it reads from a
 * Secret stays a secret. The stack's identity may read every Secret of the cluster; a chart looking up
 * a Secret in another namespace fails alone, unread, naming the namespace and the stack setting. A
 * chart copying its own namespace's Secret into a ConfigMap deploys, and the state holds the value only
 * encrypted; a chart that `fail`s quoting the value shows `[secret]` in the preview, its PR summary and
 * the failure of `up`.
 */
import { expect } from "chai";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import * as ops from "../../automation/operations";
import { openStack, runCli } from "../../automation/engine/stack";
import { liveStack } from "../support/live-stack";
import { markdownText } from "../../automation/reports/escape/markdown";

const OTHER = "lookup-e2e-other";
const SECRET = "lookup-e2e-db";
const OWN_VALUE = "own-namespace-s3cret-4711";
const OTHER_VALUE = "other-namespace-s3cret-0815";
const b64 = (s: string) => Buffer.from(s).toString("base64");
const chart = (name: string, template: string) => ({
  [`${name}/Chart.yaml`]: `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`,
  [`${name}/templates/t.yaml`]: template,
});
const FILES = {
  // The deployment's namespace is "default" (no namespace set): the Secret there is its own.
  ...chart(
    "own",
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lookup-e2e-copy\ndata:\n  password: {{ (lookup "v1" "Secret" .Release.Namespace "${SECRET}").data.password | b64dec | quote }}\n`,
  ),
  ...chart(
    "other",
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lookup-e2e-stolen\ndata:\n  password: {{ (lookup "v1" "Secret" "${OTHER}" "${SECRET}").data.password | default "" | b64dec | quote }}\n`,
  ),
  ...chart(
    "fails",
    `{{- $s := lookup "v1" "Secret" .Release.Namespace "${SECRET}" }}\n{{- if $s }}{{ fail (printf "the password is %s" ($s.data.password | b64dec)) }}{{ end }}\n`,
  ),
  // The API server refuses it quoting the value ("Unsupported value: ..."): the pair's messages are the provider's.
  ...chart(
    "refused",
    `apiVersion: v1\nkind: Service\nmetadata:\n  name: lookup-e2e-refused\nspec:\n  type: {{ (lookup "v1" "Secret" .Release.Namespace "${SECRET}").data.password | default "" | b64dec | quote }}\n  ports: [{port: 80}]\n`,
  ),
};

describe("lookup stays in the GitRepo's namespaces, and what it reads from a Secret is a secret (live cluster)", function () {
  this.timeout(10 * 60_000);
  const secretIn = (namespace: string, value: string) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: SECRET, namespace },
    data: { password: b64(value) },
  });
  const s = liveStack("lookups", {
    namespace: OTHER,
    paths: ["own", "other", "fails", "refused"],
    files: FILES,
    setup: async (st) => {
      await kubeRequest(st.cluster, "POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: OTHER } } });
      await kubeRequest(st.cluster, "POST", `/api/v1/namespaces/${OTHER}/secrets`, { body: secretIn(OTHER, OTHER_VALUE) });
      await kubeRequest(st.cluster, "POST", "/api/v1/namespaces/default/secrets", { body: secretIn("default", OWN_VALUE) });
    },
  });
  after(async () => {
    if (await kubeGet(s.cluster, `/api/v1/namespaces/default/secrets/${SECRET}`))
      await kubeRequest(s.cluster, "DELETE", `/api/v1/namespaces/default/secrets/${SECRET}`);
  });
  const leaks = (text: string) => [OWN_VALUE, b64(OWN_VALUE), OTHER_VALUE, b64(OTHER_VALUE)].filter((v) => text.includes(v));

  it("the preview: the other namespace's lookup is refused naming it and the setting; the value is [secret] in the output, the summary and the failures", async () => {
    let output = "";
    const preview = await ops.preview(
      s.options({
        onOutput: (t) => {
          output += t;
        },
      }),
    );
    const failures = Object.fromEntries(preview.failures.map((f) => [f.bundle, f.message]));
    expect(Object.keys(failures).sort()).to.deep.equal(["lookups-fails", "lookups-other"]);
    expect(failures["lookups-other"]).to.contain(`reads Secret ${SECRET} in namespace ${OTHER}`).and.contain("gitRepos[lookups].allowedTargetNamespaces");
    expect(failures["lookups-fails"]).to.contain("the password is [secret]");
    // The summary is Markdown: its words escaped as text (automation/reports/escape/markdown.ts), shown as written.
    expect(preview.summaryMarkdown).to.contain(markdownText("the password is [secret]"));
    expect(leaks(output), "preview output").to.deep.equal([]);
    expect(leaks(preview.summaryMarkdown), "summary").to.deep.equal([]);
    expect(leaks(JSON.stringify(preview.failures)), "failures").to.deep.equal([]);
  });

  it("up deploys the own-namespace copy, fails the others alone; the state holds the value only encrypted", async () => {
    let output = "";
    let failed: ops.BundlesFailedError | undefined;
    try {
      await ops.up(
        s.options({
          onOutput: (t) => {
            output += t;
          },
        }),
      );
    } catch (err) {
      if (!(err instanceof ops.BundlesFailedError)) throw err;
      failed = err;
    }
    expect(failed?.failures.map((f) => f.bundle).sort()).to.deep.equal(["lookups-fails", "lookups-other", "lookups-refused"]);
    // The API server's refusal quotes the value: withheld from every report, a secret in the state.
    expect(failed!.failures.find((f) => f.bundle === "lookups-refused")!.reason).to.match(/^ErrApplied: 1 messages withheld/);
    expect(leaks(failed!.message), "up's failure").to.deep.equal([]);
    expect(leaks(output), "up output").to.deep.equal([]);
    expect((await kubeGet(s.cluster, "/api/v1/namespaces/default/configmaps/lookup-e2e-copy")).data).to.deep.equal({ password: OWN_VALUE });
    expect(await kubeGet(s.cluster, "/api/v1/namespaces/default/configmaps/lookup-e2e-stolen")).to.equal(undefined);
    // `pulumi stack export`, as anyone with the state backend but not the passphrase sees it.
    const exported = async () => runCli(await openStack(s.options()), ["stack", "export", "--stack", "lookups"]);
    const state = await exported();
    const own = JSON.parse(state).deployment.resources.find((r: { urn: string }) => r.urn.endsWith(`::${s.cluster.name}/lookups/lookups-own`));
    expect(Object.keys(own.inputs.objects)).to.include("ciphertext");
    expect(own.outputs.objects, "the outputs keep no copy of the set").to.equal(undefined);
    expect(leaks(state), "stack export").to.deep.equal([]);
    // Unchanged, the next up registers the state's objects as they were: still a secret, nothing changes.
    const again = await ops.up(s.options()).then(
      () => undefined,
      (err) => (err instanceof ops.BundlesFailedError ? err : Promise.reject(err)),
    );
    expect(again?.events).to.deep.equal([]);
    const after = JSON.parse(await exported()).deployment.resources.find((r: { urn: string }) => r.urn.endsWith(`::${s.cluster.name}/lookups/lookups-own`));
    expect(Object.keys(after.inputs.objects)).to.include("ciphertext");
    expect(leaks(JSON.stringify(after)), "stack export after an unchanged up").to.deep.equal([]);
  });
});
