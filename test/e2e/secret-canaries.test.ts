/**
 * Nothing in clear on the way (issue 43, point 4), on a live cluster: a distinct canary in every path a
 * secret value takes (a Secret committed in a bundle, one the cluster refuses with a message quoting
 * its value, a `helm.valuesFrom` secretKeyRef, a `lookup` of a Secret, a SOPS-encrypted Secret and its
 * age key, the operator's `downstreamResources`, the agent's token, the cluster's kubeconfig token, the
 * GitRepo's git and Helm credentials), set as a team sets them (`config set --secret` into the stack
 * file), and every output searched for each, as written and base64: the preview's output, its PR
 * summary and page, `up`'s output and failure, every engine event (debug-level ones included: the
 * SDK's debug log is what `--debug` shows), `status` (its table and page), the files of the state
 * backend and of the engine's temporary directory, `stack export` without --show-secrets; and render
 * mode, which writes Secrets in clear by design, says so naming each.
 */
import { expect } from "chai";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { EngineEvent } from "@pulumi/pulumi/automation";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import { engineTempDir } from "../../automation/engine/engine-tmp";
import * as ops from "../../automation/operations";
import { openStack, runCli } from "../../automation/engine/stack";
import { formatStatusTable } from "../../automation/reports/status";
import { renderPreviewPage, renderStatusPage } from "../../automation/reports/status-page";
import { toolchain } from "../../automation/engine/toolchain";
import { liftPolicy, refuseLabelled } from "../support/admission";
import { tempDir } from "../support/git-fixtures";
import { liveClusters } from "../support/live-clusters";
import { ageKey, sopsEncrypt } from "../support/sops";

const STACK = "canaries";
const NS = "canaries-e2e";
const AGENT_NS = "canaries-agent";
const POLICY = "canaries-refuse-secrets";
const canary = (path: string) => `${path}-canary-${crypto.randomBytes(6).toString("hex")}`;
/** One canary per path a secret value takes; the kubeconfig's token and the age key are the real ones. */
const CANARY = {
  committed: canary("committed"),
  refused: canary("refused"),
  valuesFrom: canary("valuesfrom"),
  lookup: canary("lookup"),
  sops: canary("sops"),
  downstream: canary("downstream"),
  agentToken: canary("agenttoken"),
  gitToken: canary("gittoken"),
  helmPassword: canary("helmpassword"),
};
const VALUES_FROM_FILE = `vf: ${CANARY.valuesFrom}\n`;
const b64 = (s: string) => Buffer.from(s).toString("base64");

const chart = (name: string, fleetYaml: string, template: string) => ({
  [`${name}/Chart.yaml`]: `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`,
  [`${name}/templates/t.yaml`]: template,
  [`${name}/fleet.yaml`]: fleetYaml,
});
const secret = (name: string, value: string, labels = "") =>
  `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\n${labels}stringData:\n  password: ${value}\n`;
const configMapOf = (name: string, value: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: ${value}\n`;

/** Every file under a directory, as text. */
/** Each file under dir by "<label>: <path>", so a leak names its file. */
const filesUnder = (label: string, dir: string): Record<string, string> =>
  fs.existsSync(dir)
    ? Object.fromEntries(
        fs
          .readdirSync(dir, { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => [`${label}: ${path.relative(dir, path.join(e.parentPath, e.name))}`, fs.readFileSync(path.join(e.parentPath, e.name), "latin1")]),
      )
    : {};

describe("secret canaries on a live cluster: no secret value in clear in any output, event, page, log or state file", function () {
  this.timeout(20 * 60_000);
  const work = tempDir("pf-canaries-");
  const stacksDir = path.join(work, "stacks");
  const repoDir = path.join(work, "repo");
  const age = ageKey();
  let cluster: LocalCluster;
  /** Every value to look for, by what it is, in each form it may be written in. */
  let searched: Record<string, string[]>;
  const leaks = (text: string) => Object.entries(searched).flatMap(([what, forms]) => forms.filter((f) => text.includes(f)).map((f) => `${what}: ${f}`));
  /** Searches each output for every value; the test fails listing every value found and where, not only the first. */
  const expectNoLeaks = (outputs: Record<string, string>) => {
    expect(Object.entries(outputs).flatMap(([where, text]) => leaks(text).map((l) => `${where}: ${l}`))).to.deep.equal([]);
  };
  const options = (stack = STACK, over: Partial<ops.OperationOptions> = {}): ops.OperationOptions => ({
    stack,
    stateDir: path.join(work, "state"),
    stackConfigDir: stacksDir,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: STACK },
    ...over,
  });
  /** An operation's output and every engine event of it, whatever their level. */
  const captured = () => {
    const seen = { output: "", events: [] as EngineEvent[] };
    return {
      seen,
      over: {
        onOutput: (t: string) => {
          seen.output += t;
        },
        onEvent: (e: EngineEvent) => seen.events.push(e),
      },
    };
  };
  const debugEvents = (events: EngineEvent[]) => events.filter((e) => (e.diagnosticEvent?.severity as string | undefined) === "debug");

  /** The stack file as a team writes it, then every secret set with `config set --secret` (encrypted in the file). */
  async function writeStack(stack: string, extra: Record<string, unknown> = {}): Promise<void> {
    fs.writeFileSync(
      path.join(stacksDir, `Pulumi.${stack}.yaml`),
      YAML.stringify({
        config: {
          "pulumi-fleet:fleetVersion": "0.13.1",
          "pulumi-fleet:agent": { apiServerURL: "https://fleet.example.com", namespace: AGENT_NS },
          "pulumi-fleet:clusters": [{ name: cluster.name }],
          "pulumi-fleet:gitRepos": [
            {
              name: STACK,
              repo: repoDir,
              paths: ["committed", "refused", "valuesfrom", "lookup", "lookuprefused", "sops"],
              targetNamespace: NS,
              targets: [{ clusterName: cluster.name }],
              helmRepoURLRegex: "^https://charts\\.example\\.com/",
              downstreamResources: [{ kind: "Secret", name: "canaries-downstream", stringData: {} }],
              auth: { username: "canaries-git-user" },
              helmSecret: { username: "canaries-helm-user" },
            },
          ],
          ...extra,
        },
      }),
    );
    const s = await openStack(options(stack));
    const set = (key: string, value: string) => s.setConfig(key, { value, secret: true }, true);
    await set("pulumi-fleet:clusters[0].kubeconfig", fs.readFileSync(cluster.kubeconfig, "utf8"));
    await set("pulumi-fleet:agent.token", CANARY.agentToken);
    await set("pulumi-fleet:gitRepos[0].downstreamResources[0].stringData.password", CANARY.downstream);
    await set("pulumi-fleet:gitRepos[0].sopsAgeKey", age.identity);
    await set("pulumi-fleet:gitRepos[0].auth.token", CANARY.gitToken);
    await set("pulumi-fleet:gitRepos[0].helmSecret.password", CANARY.helmPassword);
    expect(leaks(fs.readFileSync(path.join(stacksDir, `Pulumi.${stack}.yaml`), "utf8")), "the stack file holds them encrypted").to.deep.equal([]);
  }

  before(async function () {
    // The engine's temporary directory is this process's, shared by every e2e file before this one: what
    // they left (an earlier version's Kubernetes provider writes each cluster's kubeconfig there, see
    // docs/security.md) is not this test's to judge. What this test's operations write is.
    for (const f of fs.readdirSync(engineTempDir())) fs.rmSync(path.join(engineTempDir(), f), { recursive: true, force: true });
    this.timeout(60 * 60_000);
    toolchain();
    cluster = liveClusters().clusters[0];
    searched = {
      ...Object.fromEntries(Object.entries(CANARY).map(([what, v]) => [what, [v, b64(v)]])),
      valuesFromFile: [b64(VALUES_FROM_FILE)],
      kubeconfigToken: [cluster.token, b64(cluster.token)],
      ageKey: [age.identity, b64(age.identity)],
    };
    const files: Record<string, string> = {
      "committed/secret.yaml": secret("canaries-committed", CANARY.committed),
      // The cluster refuses it, and its policy's message quotes the value (CEL sees the decoded data).
      "refused/secret.yaml": secret("canaries-refused", CANARY.refused, '  labels: {deny: "true"}\n'),
      ...chart(
        "valuesfrom",
        "helm:\n  valuesFrom:\n  - secretKeyRef: {name: canaries-vf-src, key: values.yaml}\n",
        configMapOf("canaries-vf", "{{ .Values.vf | quote }}"),
      ),
      ...chart(
        "lookup",
        "{}\n",
        configMapOf("canaries-lookup", `{{ (lookup "v1" "Secret" .Release.Namespace "canaries-lookup-src").data.password | default "" | b64dec | quote }}`),
      ),
      // The API server refuses it quoting the looked-up value ("Unsupported value: ...").
      ...chart(
        "lookuprefused",
        "{}\n",
        `apiVersion: v1\nkind: Service\nmetadata:\n  name: canaries-lookup-refused\nspec:\n  type: {{ (lookup "v1" "Secret" .Release.Namespace "canaries-lookup-src").data.password | default "" | b64dec | quote }}\n  ports: [{port: 80}]\n`,
      ),
      "sops/secret.yaml": sopsEncrypt("secret.yaml", secret("canaries-sops", CANARY.sops), [age.recipient]),
    };
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(repoDir, file)), { recursive: true });
      fs.writeFileSync(path.join(repoDir, file), text);
    }
    // What the cluster already holds: the Secrets valuesFrom and the lookup read, and the policy.
    await kubeRequest(cluster, "POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } } });
    for (const [name, data] of [
      ["canaries-vf-src", { "values.yaml": b64(VALUES_FROM_FILE) }],
      ["canaries-lookup-src", { password: b64(CANARY.lookup) }],
    ] as const) {
      await kubeRequest(cluster, "POST", `/api/v1/namespaces/${NS}/secrets`, {
        body: { apiVersion: "v1", kind: "Secret", metadata: { name, namespace: NS }, data },
      });
    }
    await refuseLabelled(cluster, POLICY, "secrets", { messageExpression: "'refused, its password is ' + string(object.data['password'])" }, NS);
    fs.mkdirSync(stacksDir, { recursive: true });
    await writeStack(STACK);
  });

  after(async function () {
    this.timeout(5 * 60_000);
    await liftPolicy(cluster, POLICY);
    await ops.destroy(options());
    for (const ns of [NS, AGENT_NS]) if (await kubeGet(cluster, `/api/v1/namespaces/${ns}`)) await kubeRequest(cluster, "DELETE", `/api/v1/namespaces/${ns}`);
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("the preview: no value in its output, its events, its PR summary or its page", async () => {
    const { seen, over } = captured();
    const preview = await ops.preview(options(STACK, over));
    expect(preview.failures).to.deep.equal([]);
    expect(seen.output).to.contain("canaries-committed");
    expect(debugEvents(seen.events), "the engine's debug events are searched too").not.to.deep.equal([]);
    expectNoLeaks({
      "preview output": seen.output,
      "engine events": JSON.stringify(seen.events),
      "PR summary": preview.summaryMarkdown,
      "preview page": renderPreviewPage(preview),
      ...filesUnder("the engine's temporary directory", engineTempDir()),
    });
  });

  it("up deploys every value and fails only the two refused pairs, whose messages withhold it; no value in the output, events, failure, state or logs", async () => {
    const { seen, over } = captured();
    const failed = await ops.up(options(STACK, over)).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(failed).to.be.instanceOf(ops.BundlesFailedError);
    const failures = (failed as ops.BundlesFailedError).failures;
    expect(failures.map((f) => f.bundle).sort()).to.deep.equal([`${STACK}-lookuprefused`, `${STACK}-refused`]);
    // Every value reached the cluster.
    const value = async (kind: "secrets" | "configmaps", name: string) => {
      const o = await kubeGet(cluster, `/api/v1/namespaces/${NS}/${kind}/${name}`);
      return kind === "secrets" ? Buffer.from(o.data.password, "base64").toString() : o.data.value;
    };
    expect(await value("secrets", "canaries-committed")).to.equal(CANARY.committed);
    expect(await value("secrets", "canaries-sops")).to.equal(CANARY.sops);
    expect(await value("secrets", "canaries-downstream")).to.equal(CANARY.downstream);
    expect(await value("configmaps", "canaries-vf")).to.equal(CANARY.valuesFrom);
    expect(await value("configmaps", "canaries-lookup")).to.equal(CANARY.lookup);
    expect(await kubeGet(cluster, `/api/v1/namespaces/${NS}/secrets/canaries-refused`), "refused").to.equal(undefined);

    expect(debugEvents(seen.events), "the engine's debug events are searched too").not.to.deep.equal([]);
    // As anyone with the state backend but not the passphrase sees it, and every file written beside it.
    const state = await runCli(await openStack(options()), ["stack", "export", "--stack", STACK]);
    expect(state).to.contain("canaries-committed");
    expectNoLeaks({
      "up output": seen.output,
      "up's failure": failed!.message,
      failures: JSON.stringify(failures),
      "engine events": JSON.stringify(seen.events),
      "stack export": state,
      ...filesUnder("state directory", path.join(work, "state")),
      ...filesUnder("the engine's temporary directory", engineTempDir()),
    });
    // The server's refusal quotes the value: a refused Secret's message says it with [secret] for the
    // value, a pair whose objects are secret as a whole only how many messages it withheld.
    expect(failed!.message)
      .to.contain("refused, its password is [secret]")
      .and.to.match(/canaries-lookuprefused, cluster [^:]+: ErrApplied: 1 messages withheld/);
  });

  it("the next up changes nothing that deployed, and registers the state's Secrets as secrets again", async () => {
    const { seen, over } = captured();
    const again = (await ops.up(options(STACK, over)).then(
      () => undefined,
      (e: Error) => e,
    )) as ops.BundlesFailedError;
    expect(again).to.be.instanceOf(ops.BundlesFailedError);
    expect(
      again.events.filter((e) => e.event === "deployed"),
      "only the refused pairs are tried again",
    ).to.deep.equal([]);
    const state = await runCli(await openStack(options()), ["stack", "export", "--stack", STACK]);
    expectNoLeaks({
      "up output": seen.output,
      "up's failure": again.message,
      "engine events": JSON.stringify(seen.events),
      "stack export": state,
      ...filesUnder("state directory", path.join(work, "state")),
    });
  });

  it("status and its page name the refused pair and hold no value", async () => {
    const { seen, over } = captured();
    const report = await ops.status(options(STACK, over));
    const table = formatStatusTable(report);
    expect(table).to.contain(`${STACK}-refused`);
    expectNoLeaks({
      "status output": seen.output,
      "status events": JSON.stringify(seen.events),
      "status table": table,
      "status page": renderStatusPage(report),
      "status report": JSON.stringify(report),
    });
  });

  it("render mode writes the Secrets in clear to its directory and says so, naming each; nothing else holds a value", async () => {
    const renderDir = path.join(work, "render");
    await writeStack("canaries-render", { "pulumi-fleet:renderDir": renderDir });
    const { seen, over } = captured();
    const r = await ops.up(options("canaries-render", over)).then(
      () => undefined,
      (e: Error) => e,
    );
    const said = seen.output + (r ? r.message : "");
    expectNoLeaks({ "render mode's output": said, "render mode's events": JSON.stringify(seen.events) });
    const written = Object.values(filesUnder("render", renderDir)).join("\n");
    expect(written, "written in clear, as render mode must").to.contain(CANARY.committed);
    for (const name of ["canaries-committed", "canaries-sops", "canaries-downstream"]) {
      expect(said, `render mode names ${name} as written in clear`).to.match(new RegExp(`in clear[^\\n]*${name}`));
    }
    await ops.destroy(options("canaries-render"));
  });
});
