/**
 * What a person reads, through the command users run (`npm run up|preview`, scripts/fleet.ts) with the
 * real engine on the live local clusters: a no-op `up` prints a line or two, never the stack's outputs;
 * a `preview` with one cluster's API server down says it could not read that cluster, in its output and
 * in its pull-request summary, and exits with the distinct code of automation/reports/exit-codes.ts;
 * a Deployment whose pod cannot be scheduled is named with the scheduler's words beside kstatus's.
 */
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import * as YAML from "yaml";
import { kubeGet, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import { toolchain } from "../../automation/engine/toolchain";
import { EXIT } from "../../automation/reports/exit-codes";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { tempDir } from "../support/git-fixtures";
import { liveClusters } from "../support/live-clusters";

const NS = "first-contact";
const AGENT_NS = "first-contact-agent";

/** A loopback port nobody listens on (taken, then released). */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("output a person reads: a no-op up, a preview with a cluster down (live clusters)", function () {
  this.timeout(15 * 60_000);
  const work = tempDir("pf-first-contact-");
  const stacks = path.join(work, "stacks");
  const repo = path.join(work, "repo");
  const env = {
    ...process.env,
    PULUMI_FLEET_STACKS_DIR: stacks,
    PULUMI_FLEET_STATE_DIR: path.join(work, "state"),
    PULUMI_CONFIG_PASSPHRASE: "first-contact",
    CI: "true",
  };
  let live: LocalCluster[];
  let downKubeconfig: string;

  const fleet = (args: string[]) => {
    const r = spawnSync(process.execPath, [path.join(PROJECT_DIR, "scripts/run-ts.js"), path.join(PROJECT_DIR, "scripts/fleet.ts"), ...args], {
      cwd: PROJECT_DIR,
      env,
      encoding: "utf8",
      maxBuffer: 1 << 28,
    });
    return { code: r.status, out: r.stdout, err: r.stderr, all: r.stdout + r.stderr };
  };
  const define = (withDown: boolean, paths = ["app"]) => {
    const clusters = live.map((c) => ({ name: c.name, kubeconfig: fs.readFileSync(c.kubeconfig, "utf8") }));
    if (withDown) clusters.push({ name: "down-1", kubeconfig: downKubeconfig });
    const config = {
      "pulumi-fleet:fleetVersion": "0.13.1",
      "pulumi-fleet:agent": { apiServerURL: "https://fleet.example.com", namespace: AGENT_NS },
      "pulumi-fleet:clusters": clusters,
      "pulumi-fleet:gitRepos": [{ name: "contact", repo, paths, targets: [{ clusterSelector: {} }] }],
    };
    fs.writeFileSync(path.join(stacks, "Pulumi.contact.yaml"), YAML.stringify({ config }));
  };

  before(async function () {
    this.timeout(60 * 60_000);
    toolchain();
    live = liveClusters().clusters.slice(0, 2);
    // The same cluster's credentials, at a server address nobody listens on: its API server is "down".
    const kubeconfig = YAML.parse(fs.readFileSync(live[0].kubeconfig, "utf8"));
    for (const c of kubeconfig.clusters) c.cluster.server = `https://127.0.0.1:${await deadPort()}`;
    downKubeconfig = YAML.stringify(kubeconfig);
    fs.mkdirSync(stacks, { recursive: true });
    fs.mkdirSync(path.join(repo, "app"), { recursive: true });
    fs.writeFileSync(path.join(repo, "app", "fleet.yaml"), `defaultNamespace: ${NS}\n`);
    fs.writeFileSync(path.join(repo, "app", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\ndata:\n  k: v\n");
    // A Deployment whose pod no node takes (a node selector nothing matches): the scheduler says why.
    fs.mkdirSync(path.join(repo, "stuck"), { recursive: true });
    fs.writeFileSync(path.join(repo, "stuck", "fleet.yaml"), `defaultNamespace: ${NS}\nhelm:\n  timeoutSeconds: 5\n`);
    fs.writeFileSync(
      path.join(repo, "stuck", "deploy.yaml"),
      YAML.stringify({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "stuck" },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "stuck" } },
          template: {
            metadata: { labels: { app: "stuck" } },
            spec: { nodeSelector: { "first-contact/nowhere": "true" }, containers: [{ name: "app", image: "registry.invalid/app:1" }] },
          },
        },
      }),
    );
  });

  after(async function () {
    this.timeout(10 * 60_000);
    if (fs.existsSync(path.join(stacks, "Pulumi.contact.yaml"))) {
      define(false);
      fleet(["destroy", "--stack", "contact", "--quiet"]);
    }
    for (const c of live ?? []) {
      for (const ns of [NS, AGENT_NS]) if (await kubeGet(c, `/api/v1/namespaces/${ns}`)) await kubeRequest(c, "DELETE", `/api/v1/namespaces/${ns}`);
    }
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("a no-op up prints at most a few lines and never the stack's outputs (--outputs asks for them)", () => {
    define(false);
    const first = fleet(["up", "--stack", "contact"]);
    expect(first.code, first.all.slice(-3000)).to.equal(EXIT.ok);
    // What changed, per cluster: the table (two clusters, one bundle each).
    expect(first.out).to.match(/^cluster +ready\/bundles +changed +failed$/m);
    for (const c of live) expect(first.out).to.match(new RegExp(`^${c.name} +1/1 +1 +0$`, "m"));

    const again = fleet(["up", "--stack", "contact"]);
    expect(again.code, again.all.slice(-3000)).to.equal(EXIT.ok);
    const lines = again.all.split("\n").filter((l) => l.trim());
    expect(lines.length, again.all).to.be.at.most(3);
    expect(again.out).to.match(/^up of stack contact succeeded in [\d.]+ s: nothing to do \(2 bundle deployment\(s\) on 2 cluster\(s\) unchanged\)$/m);
    expect(again.all).to.not.match(/deploymentStates|Outputs:|clusterSetupStates/);

    const outputs = fleet(["up", "--stack", "contact", "--outputs", "--quiet"]);
    expect(outputs.code, outputs.all.slice(-3000)).to.equal(EXIT.ok);
    expect(outputs.out).to.contain('"deploymentStates"');
  });

  it("a preview, an up and a status that cannot read a cluster say so, in their output and the summary, and exit with their own code", () => {
    define(true);
    const summary = path.join(work, "summary.md");
    const r = fleet(["preview", "--stack", "contact", "--summary-md", summary]);
    expect(r.code, r.all.slice(-3000)).to.equal(EXIT.clustersUnreachable);
    // The table names the cluster not read; the error line says what happened to it and to the others.
    expect(r.out, r.all).to.match(/^down-1 +1 +\? +\? +not read: https:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED/m);
    expect(r.err).to.match(
      /^error: preview of stack contact could not read cluster down-1 \(.*ECONNREFUSED.*\): left out of this preview, the other clusters were previewed$/m,
    );
    expect(r.all).to.not.match(/succeeded|down-1: \d+\/\d+ bundles previewed/);
    expect(fs.readFileSync(summary, "utf8")).to.match(/cluster `down-1` is unreachable \(.*\): it was left out of this preview/);
    // up: the same code, the others updated.
    const up = fleet(["up", "--stack", "contact"]);
    expect(up.code, up.all.slice(-3000)).to.equal(EXIT.clustersUnreachable);
    expect(up.err).to.contain("cluster down-1 is unreachable");
    // status: what it could read, the cluster it could not, and the same code.
    const status = fleet(["status", "--stack", "contact"]);
    expect(status.code, status.all.slice(-3000)).to.equal(EXIT.clustersUnreachable);
    expect(status.err).to.match(
      /^error: status of stack contact could not read cluster down-1 \(.*ECONNREFUSED.*\): its pairs are shown NotReady, not observed now$/m,
    );
  });

  it("a workload not ready says why in its own words beside kstatus's: the pod the scheduler could not place", () => {
    define(false, ["app", "stuck"]);
    const r = fleet(["up", "--stack", "contact", "--quiet"]);
    expect(r.code, r.all.slice(-3000)).to.equal(EXIT.failed);
    expect(r.err).to.match(
      new RegExp(
        `Deployment ${NS}/stuck is not ready after the timeout of 5s: InProgress: [^\n]*\\(pod stuck-\\S+: PodScheduled: Unschedulable: 0/1 nodes are available: 1 node\\(s\\) didn't match Pod's node affinity/selector`,
      ),
    );
    // The two clusters' one cause, each its own pair: one line per pair here (their pods differ).
    expect(r.err.match(/is not ready after the timeout/g)).to.have.length(2);
  });
});
