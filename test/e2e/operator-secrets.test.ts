/**
 * Secrets from the operator to the clusters (gitRepos[].downstreamResources, issue 43) on the live
 * clusters, through the stack file as a team keeps it: the value set with `config set --secret --path`
 * (encrypted in the file), read by the program from the engine's config. The Secret lands on each
 * cluster the GitRepo targets, applied (with its namespace, in the cluster's setup) before the
 * GitRepo's bundle there, whose Deployment reads it; not on a cluster of the stack the GitRepo does not
 * target; and is pruned in the same `up` that drops a target. Its value is in no preview output, PR
 * summary, `up` output, state (`stack export` and every file of the state directory) or stack file.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { EngineEvent } from "@pulumi/pulumi/automation";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { openStack, runCli } from "../../automation/engine/stack";
import { toolchain } from "../../automation/engine/toolchain";
import { tempDir } from "../support/git-fixtures";
import { liveClusters } from "../support/live-clusters";

const NAME = "opsecrets";
const NS = "opsecrets-e2e";
const CANARY = "opsecret-canary-9c41e7";
const b64 = (s: string) => Buffer.from(s).toString("base64");
const leaks = (text: string) => [CANARY, b64(CANARY)].filter((v) => text.includes(v));
const FILES: Record<string, string> = {
  "app/deployment.yaml": [
    "apiVersion: apps/v1",
    "kind: Deployment",
    "metadata:",
    "  name: uses-op-secret",
    "spec:",
    "  replicas: 1",
    "  selector:",
    "    matchLabels: {app: uses-op-secret}",
    "  template:",
    "    metadata:",
    "      labels: {app: uses-op-secret}",
    "    spec:",
    "      containers:",
    "        - name: app",
    "          image: nginx:1.27",
    "          env:",
    "            - name: DB_PASSWORD",
    "              valueFrom: {secretKeyRef: {name: op-db, key: password}}",
    "",
  ].join("\n"),
};

/** Every file under a directory, as text: the state backend's files, backups and history included. */
const filesUnder = (dir: string): string =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => fs.readFileSync(path.join(e.parentPath, e.name), "utf8"))
        .join("\n")
    : "";

describe("operator secrets on live clusters: from the encrypted stack config to the targeted clusters, before the bundles, pruned with the target", function () {
  this.timeout(15 * 60_000);
  const work = tempDir(`pf-${NAME}-`);
  const stacksDir = path.join(work, "stacks");
  const stackFile = path.join(stacksDir, `Pulumi.${NAME}.yaml`);
  const repoDir = path.join(work, "repo");
  const options = (over: Partial<ops.OperationOptions> = {}): ops.OperationOptions => ({
    stack: NAME,
    stateDir: path.join(work, "state"),
    stackConfigDir: stacksDir,
    deploy: { cacheRoot: path.join(work, "git-cache") },
    env: { PULUMI_CONFIG_PASSPHRASE: NAME },
    ...over,
  });
  let clusters: LocalCluster[];
  const names = () => clusters.map((c) => c.name);
  const secretOn = (c: LocalCluster) => kubeGet(c, `/api/v1/namespaces/${NS}/secrets/op-db`);
  const deploymentOn = (c: LocalCluster) => kubeGet(c, `/apis/apps/v1/namespaces/${NS}/deployments/uses-op-secret`);
  /** Rewrites the GitRepo's targets in the stack file, keeping what the CLI encrypted. */
  const target = (clusterNames: string[]) => {
    const doc = YAML.parse(fs.readFileSync(stackFile, "utf8"));
    doc.config["pulumi-fleet:gitRepos"][0].targets = clusterNames.map((n) => ({ clusterName: n }));
    fs.writeFileSync(stackFile, YAML.stringify(doc));
  };

  before(async function () {
    this.timeout(60 * 60_000);
    toolchain();
    clusters = liveClusters().clusters.slice(0, 3);
    expect(clusters, "three live clusters: two targeted, one not").to.have.length(3);
    for (const [file, text] of Object.entries(FILES)) {
      fs.mkdirSync(path.dirname(path.join(repoDir, file)), { recursive: true });
      fs.writeFileSync(path.join(repoDir, file), text);
    }
    fs.mkdirSync(stacksDir, { recursive: true });
    fs.writeFileSync(
      stackFile,
      YAML.stringify({
        config: {
          "pulumi-fleet:agent": { enabled: false },
          "pulumi-fleet:clusters": clusters.map((c) => ({ name: c.name })),
          "pulumi-fleet:gitRepos": [
            {
              name: NAME,
              repo: repoDir,
              paths: ["app"],
              targetNamespace: NS,
              targets: [],
              downstreamResources: [{ kind: "Secret", name: "op-db", labels: { team: "a" }, stringData: {} }],
            },
          ],
        },
      }),
    );
    target(names().slice(0, 2));
    // As a team does it (README, docs/configuration.md): every credential and the operator's secret encrypted in the file.
    const stack = await openStack(options());
    for (const [i, c] of clusters.entries())
      await stack.setConfig(`pulumi-fleet:clusters[${i}].kubeconfig`, { value: fs.readFileSync(c.kubeconfig, "utf8"), secret: true }, true);
    await stack.setConfig("pulumi-fleet:gitRepos[0].downstreamResources[0].stringData.password", { value: CANARY, secret: true }, true);
    expect(leaks(fs.readFileSync(stackFile, "utf8")), "the stack file holds it encrypted").to.deep.equal([]);
    expect(fs.readFileSync(stackFile, "utf8")).to.contain("secure:");
  });

  after(async function () {
    this.timeout(5 * 60_000);
    await ops.destroy(options());
    for (const c of clusters ?? []) if (await kubeGet(c, `/api/v1/namespaces/${NS}`)) await kubeRequest(c, "DELETE", `/api/v1/namespaces/${NS}`);
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("the preview and its PR summary show no value", async () => {
    let output = "";
    const preview = await ops.preview(
      options({
        onOutput: (t) => {
          output += t;
        },
      }),
    );
    expect(preview.failures).to.deep.equal([]);
    expect(output, "the preview names the set that holds it").to.contain("ClusterSetup");
    expect(leaks(output), "preview output").to.deep.equal([]);
    expect(leaks(preview.summaryMarkdown), "PR summary").to.deep.equal([]);
  });

  it("up: the Secret lands on both targeted clusters, each before the bundle that reads it, and not on the third; no value in the output or the state", async () => {
    let output = "";
    const events: EngineEvent[] = [];
    await ops.up(
      options({
        onOutput: (t) => {
          output += t;
        },
        onEvent: (e) => events.push(e),
      }),
    );
    const [a, b, untargeted] = clusters;
    for (const c of [a, b]) {
      const s = await secretOn(c);
      expect(s, `Secret on ${c.name}`).to.not.equal(undefined);
      expect(Buffer.from(s.data.password, "base64").toString()).to.equal(CANARY);
      expect([s.type, s.metadata.labels.team, s.metadata.annotations["pulumi-fleet.io/downstream-resource-of"]]).to.deep.equal(["Opaque", "a", NAME]);
      expect(await deploymentOn(c), `the bundle on ${c.name}`).to.not.equal(undefined);
      // The engine finished the cluster's setup (namespace and Secret applied) before it started the pair.
      const setupDone = events.findIndex((e) => e.resOutputsEvent?.metadata.urn.endsWith(`pulumi-fleet:index:ClusterSetup::${c.name}`));
      const pairStarted = events.findIndex((e) => e.resourcePreEvent?.metadata.urn.endsWith(`::${c.name}/${NAME}/${NAME}-app`));
      expect(setupDone, `${c.name}'s setup finished`).to.be.greaterThan(-1);
      expect(pairStarted, `${c.name}'s pair started after it`).to.be.greaterThan(setupDone);
    }
    expect(await secretOn(untargeted), "not targeted").to.equal(undefined);
    expect(leaks(output), "up output").to.deep.equal([]);
    // Every event, the debug ones (the SDK's log of each registration's answer, what --debug shows) included.
    expect(
      events.some((e) => (e.diagnosticEvent?.severity as string | undefined) === "debug"),
      "debug events are searched too",
    ).to.equal(true);
    expect(leaks(JSON.stringify(events)), "engine events").to.deep.equal([]);
    // `pulumi stack export` without --show-secrets, and every file the state backend wrote.
    const state = await runCli(await openStack(options()), ["stack", "export", "--stack", NAME]);
    expect(state).to.contain("op-db");
    expect(leaks(state), "stack export").to.deep.equal([]);
    expect(leaks(filesUnder(path.join(work, "state"))), "state directory").to.deep.equal([]);
  });

  it("dropping a target prunes its Secret and its bundle in the same up; the other cluster keeps both", async () => {
    const [a, b] = clusters;
    target([a.name]);
    let output = "";
    await ops.up(
      options({
        onOutput: (t) => {
          output += t;
        },
      }),
    );
    expect(await secretOn(b), "pruned from the dropped cluster").to.equal(undefined);
    expect(await deploymentOn(b), "the bundle went in the same up").to.equal(undefined);
    expect(Buffer.from((await secretOn(a)).data.password, "base64").toString()).to.equal(CANARY);
    expect(leaks(output), "up output").to.deep.equal([]);
    expect(leaks(filesUnder(path.join(work, "state"))), "state directory").to.deep.equal([]);
  });
});
