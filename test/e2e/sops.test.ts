/**
 * SOPS-encrypted manifests on a live cluster (issue 43, point 3), with real git repositories: team A's
 * Secret, encrypted for A's age key, is decrypted with the key the stack gives GitRepo team-a and
 * deployed; the same file copied byte for byte into team B's repository does not open with team-b's key,
 * so that bundle fails alone, naming the file, while team B's other bundle deploys. The plaintext is in
 * no preview or up output, PR summary, failure, `stack export` or file of the state backend.
 */
import { expect } from "chai";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { openStack, runCli } from "../../automation/engine/stack";
import { toolchain } from "../../automation/engine/toolchain";
import { StackConfig } from "../../core/config/stack";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "../support/git-fixtures";
import { liveClusters } from "../support/live-clusters";
import { ageKey, sopsEncrypt } from "../support/sops";
import { liveClusterConfig } from "../support/live-stack";

const STACK = "sops";
const NS_A = "sops-team-a";
const NS_B = "sops-team-b";
const CANARY = `sops-e2e-${crypto.randomBytes(8).toString("hex")}`;
const b64 = (s: string) => Buffer.from(s).toString("base64");
const leaks = (text: string) => [CANARY, b64(CANARY)].filter((v) => text.includes(v));
const SECRET = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: team-db\nstringData:\n  password: ${CANARY}\n`;

/** Every file under a directory, as text (the state backend's files). */
function allText(dir: string): string {
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => path.join(dir, f))
    .filter((f) => fs.statSync(f).isFile())
    .map((f) => fs.readFileSync(f, "latin1"))
    .join("\n");
}

describe("SOPS-encrypted Secrets on a live cluster: decrypted with the GitRepo's own age key, a copied file fails alone", function () {
  this.timeout(10 * 60_000);
  const work = tempDir("pf-sops-");
  const keyA = ageKey();
  const keyB = ageKey();
  const encrypted = sopsEncrypt("db.yaml", SECRET, [keyA.recipient]);
  let cluster: LocalCluster;
  let config: StackConfig;
  const options = (over: Partial<ops.OperationOptions> = {}): ops.OperationOptions => ({
    stack: STACK,
    stateDir: path.join(work, "state"),
    stackConfigDir: work,
    config,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: STACK },
    ...over,
  });
  const up = async () => {
    let output = "";
    try {
      const r = await ops.up(
        options({
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
  const deployed = (events: { event: string; bundle: string }[]) => events.map((e) => `${e.event} ${e.bundle}`).sort();

  before(async function () {
    this.timeout(60 * 60_000);
    toolchain();
    cluster = liveClusters().clusters[0];
    const teamA = new TestRepo({ "db/fleet.yaml": `defaultNamespace: ${NS_A}\n`, "db/db.yaml": encrypted });
    // Team B copied team A's encrypted file into its own repository.
    const teamB = new TestRepo({
      "copied/fleet.yaml": `defaultNamespace: ${NS_B}\n`,
      "copied/db.yaml": encrypted,
      "own/fleet.yaml": `defaultNamespace: ${NS_B}\n`,
      "own/cm.yaml": CONFIGMAP("team-b-own"),
    });
    expect(encrypted).not.to.contain(CANARY);
    config = {
      file: `stacks/Pulumi.${STACK}.yaml`,
      agent: { enabled: false },
      clusterGroups: [],
      clusters: [liveClusterConfig(cluster)],
      gitRepos: [
        gitRepoConfig({ name: "team-a", repo: teamA.url(), targets: [{ clusterSelector: {} }], sopsAgeKey: keyA.identity }),
        gitRepoConfig({ name: "team-b", repo: teamB.url(), targets: [{ clusterSelector: {} }], sopsAgeKey: keyB.identity }),
      ],
    };
  });

  after(async function () {
    this.timeout(5 * 60_000);
    await ops.destroy(options());
    for (const ns of [NS_A, NS_B]) if (await kubeGet(cluster, `/api/v1/namespaces/${ns}`)) await kubeRequest(cluster, "DELETE", `/api/v1/namespaces/${ns}`);
    fs.rmSync(work, { recursive: true, force: true });
  });

  const copiedFails = () =>
    `copied/db.yaml gitRepo team-b, bundle team-b-copied, cluster ${cluster.name}: ` +
    `the SOPS-encrypted file cannot be decrypted with this GitRepo's age key (sopsAgeKey): it is encrypted for ${keyA.recipient}`;

  it("the preview: only the copied file's bundle fails, naming the file and the key it needs; the value is in no output, summary or failure", async () => {
    let output = "";
    const preview = await ops.preview(
      options({
        onOutput: (t) => {
          output += t;
        },
      }),
    );
    expect(preview.failures.map((f) => `${f.bundle} ${f.cluster}`)).to.deep.equal([`team-b-copied ${cluster.name}`]);
    expect(preview.failures[0].message).to.contain(copiedFails());
    expect(leaks(output), "preview output").to.deep.equal([]);
    expect(leaks(preview.summaryMarkdown), "summary").to.deep.equal([]);
    expect(leaks(JSON.stringify(preview.failures)), "failures").to.deep.equal([]);
  });

  it("up deploys team A's decrypted Secret and team B's own bundle; the copy fails alone; the state holds the value only encrypted", async () => {
    const r = await up();
    expect(r.failures.map((f) => f.bundle)).to.deep.equal(["team-b-copied"]);
    expect(r.message).to.contain(copiedFails());
    expect(deployed(r.events)).to.deep.equal(["deployed team-a-db", "deployed team-b-own"]);
    const secret = await kubeGet(cluster, `/api/v1/namespaces/${NS_A}/secrets/team-db`);
    expect(Buffer.from(secret.data.password, "base64").toString()).to.equal(CANARY);
    expect(secret.metadata.labels["fleet.cattle.io/repo-name"]).to.equal("team-a");
    expect(await kubeGet(cluster, `/api/v1/namespaces/${NS_B}/secrets/team-db`), "team B's copy").to.equal(undefined);
    expect(await kubeGet(cluster, `/api/v1/namespaces/${NS_B}/configmaps/team-b-own`)).not.to.equal(undefined);
    expect(leaks(r.output), "up output").to.deep.equal([]);
    expect(leaks(r.message), "up's failure").to.deep.equal([]);
    // As anyone with the state backend but not the passphrase sees it: `stack export`, and the backend's files.
    const state = await runCli(await openStack(options()), ["stack", "export", "--stack", STACK]);
    const pair = JSON.parse(state).deployment.resources.find((x: { urn: string }) => x.urn.endsWith(`::${cluster.name}/team-a/team-a-db`));
    expect(Object.keys(pair.inputs.objects)).to.include("ciphertext");
    expect(leaks(state), "stack export").to.deep.equal([]);
    expect(leaks(allText(path.join(work, "state"))), "state files").to.deep.equal([]);
  });

  it("the next up changes nothing and keeps the Secret secret in the state", async () => {
    const again = await up();
    expect(deployed(again.events)).to.deep.equal([]);
    expect(again.failures.map((f) => f.bundle)).to.deep.equal(["team-b-copied"]);
    expect(leaks(again.output), "up output").to.deep.equal([]);
    expect(leaks(allText(path.join(work, "state"))), "state files").to.deep.equal([]);
    expect(Buffer.from((await kubeGet(cluster, `/api/v1/namespaces/${NS_A}/secrets/team-db`)).data.password, "base64").toString()).to.equal(CANARY);
  });
});
