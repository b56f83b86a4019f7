/**
 * A sharded environment on the live local clusters, through the commands users run (`npm run shards`,
 * `npm run preview|up|status` as fleet.ts and shards.ts processes): one definition, two shard stacks,
 * merged reports, a failed shard that does not stop the other, and a cluster moved between shards
 * with `pulumi state move`: every object UID and the agent pod UID unchanged, and both shards'
 * previews empty afterwards. Also the operator's Stack resources, dry-run on the API server against
 * the Pulumi Kubernetes Operator's own CustomResourceDefinition.
 */
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { kubeGet, kubeList, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster, startComponent, stopComponent } from "../../automation/clusters/local-clusters";
import { EXIT } from "../../automation/reports/exit-codes";
import { toolchain } from "../../automation/engine/toolchain";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { tempDir } from "../support/git-fixtures";
import { liveClusters } from "../support/live-clusters";
import { eventually } from "../support/eventually";
import { runsStore } from "../../automation/runs/runs";
import { resolveBackend } from "../../automation/engine/backend";
import { PROJECT_NAME } from "../../automation/engine/stack";

const NS = "shards-test";
const AGENT_NS = "shards-agent";

describe("sharding: one definition, shard stacks, merged runs, moving a cluster (live clusters)", function () {
  this.timeout(20 * 60_000);
  const work = tempDir("pf-shards-");
  const stacks = path.join(work, "stacks");
  const repo = path.join(work, "repo");
  const metricsDir = path.join(work, "metrics");
  const env = {
    ...process.env,
    PULUMI_FLEET_STACKS_DIR: stacks,
    PULUMI_FLEET_STATE_DIR: path.join(work, "state"),
    PULUMI_CONFIG_PASSPHRASE: "shards",
    CI: "true",
  };
  let live: LocalCluster[];

  const cli = (script: string, args: string[]) => {
    const r = spawnSync(process.execPath, [path.join(PROJECT_DIR, "scripts/run-ts.js"), path.join(PROJECT_DIR, "scripts", script), ...args], {
      cwd: PROJECT_DIR,
      env,
      encoding: "utf8",
      maxBuffer: 1 << 28,
    });
    return { code: r.status, out: r.stdout, err: r.stderr, all: r.stdout + r.stderr };
  };
  const ok = (r: ReturnType<typeof cli>) => {
    expect(r.code, r.all.slice(-3000)).to.equal(0);
    return r;
  };
  /** The definition: live-1 in shard a, live-2 in shard a or b, or in none (left out of the definition). */
  const define = (live2In: "a" | "b" | "none") => {
    const config = {
      "pulumi-fleet:fleetVersion": "0.13.1",
      "pulumi-fleet:agent": { apiServerURL: "https://fleet.example.com", namespace: AGENT_NS },
      "pulumi-fleet:clusters": live
        .filter((c) => live2In !== "none" || c !== live[1])
        .map((c) => ({ name: c.name, labels: { site: c.name }, kubeconfig: fs.readFileSync(c.kubeconfig, "utf8") })),
      "pulumi-fleet:gitRepos": [{ name: "shards", repo, paths: ["app"], targets: [{ clusterSelector: {} }] }],
      "pulumi-fleet:metrics": { textfileDirectory: metricsDir },
      "pulumi-fleet:shards": [
        { name: "a", clusters: live2In === "a" ? [live[0].name, live[1].name] : [live[0].name] },
        { name: "b", clusters: live2In === "b" ? [live[1].name] : [] },
      ],
    };
    // A shard rule with an empty list selects nothing; it stays a valid shard (its stack holds no cluster).
    fs.writeFileSync(path.join(stacks, "Pulumi.fleetsh.yaml"), YAML.stringify({ config }));
  };
  const objectUids = async (c: LocalCluster) =>
    (await kubeList(c, `/api/v1/namespaces/${NS}/configmaps`, "fleet.cattle.io/repo-name=shards"))
      .map((o: any) => `${o.metadata.name} ${o.metadata.uid}`)
      .sort();
  const agentPods = async (c: LocalCluster) =>
    (await kubeList(c, `/api/v1/namespaces/${AGENT_NS}/pods`, "app=fleet-agent")).map((p: any) => p.metadata.uid).sort();

  before(function () {
    this.timeout(60 * 60_000);
    toolchain();
    live = liveClusters().clusters.slice(0, 2);
    fs.mkdirSync(stacks, { recursive: true });
    fs.mkdirSync(metricsDir, { recursive: true });
    fs.mkdirSync(path.join(repo, "app"), { recursive: true });
    fs.writeFileSync(path.join(repo, "app", "fleet.yaml"), `defaultNamespace: ${NS}\n`);
    fs.writeFileSync(
      path.join(repo, "app", "cm.yaml"),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\ndata:\n  k: v\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\ndata:\n  k: v\n",
    );
  });

  after(async function () {
    this.timeout(10 * 60_000);
    for (const s of ["fleetsh.a", "fleetsh.b"]) if (fs.existsSync(path.join(stacks, `Pulumi.${s}.yaml`))) cli("fleet.ts", ["destroy", "--stack", s]);
    for (const c of live ?? []) {
      for (const ns of [NS, AGENT_NS]) if (await kubeGet(c, `/api/v1/namespaces/${ns}`)) await kubeRequest(c, "DELETE", `/api/v1/namespaces/${ns}`);
    }
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("shows the shards before anything runs, refuses to run before the files exist, then writes them and hands out a CI matrix", () => {
    define("b");
    const shown = ok(cli("shards.ts", ["--stack", "fleetsh"])).out;
    expect(shown).to.contain(`new ${live[0].name} -> a`).and.contain(`new ${live[1].name} -> b`);
    const refused = cli("fleet.ts", ["preview", "--stack", "fleetsh"]);
    expect(refused.code).to.not.equal(0);
    expect(refused.err).to.contain("the shard files are not current: run `npm run shards -- --stack fleetsh --apply`");
    ok(cli("shards.ts", ["--stack", "fleetsh", "--apply"]));
    expect(JSON.parse(ok(cli("shards.ts", ["--stack", "fleetsh", "--matrix"])).out)).to.deep.equal({
      include: [
        { shard: "a", stack: "fleetsh.a" },
        { shard: "b", stack: "fleetsh.b" },
      ],
    });
  });

  it("a cluster in two shards is refused before anything runs, naming it", () => {
    const text = fs.readFileSync(path.join(stacks, "Pulumi.fleetsh.yaml"), "utf8");
    fs.writeFileSync(
      path.join(stacks, "Pulumi.fleetsh.yaml"),
      text.replace(/- name: b\n(\s+)clusters:\n\s+- (\S+)/, `- name: b\n$1clusters:\n$1  - $2\n$1  - ${live[0].name}`),
    );
    const r = cli("fleet.ts", ["up", "--stack", "fleetsh"]);
    expect(r.code).to.not.equal(0);
    expect(r.err).to.contain(`shards: cluster ${live[0].name} is in 2 shards (a, b)`);
    define("b");
  });

  it("up runs both shards and reports each deploy once; preview merges the PR summary; status merges both", async () => {
    const events = path.join(work, "events.jsonl");
    const up = ok(cli("fleet.ts", ["up", "--stack", "fleetsh", "--events-json", events]));
    expect(up.out)
      .to.match(/\[a\] .*up of stack fleetsh\.a succeeded/)
      .and.match(/\[b\] .*up of stack fleetsh\.b succeeded/);
    expect(up.out).to.contain("up of environment fleetsh: 2/2 shards succeeded");
    const lines = fs
      .readFileSync(events, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((e) => `${e.shard} ${e.event} ${e.cluster} ${e.bundle}`)).to.deep.equal([
      `a deployed ${live[0].name} shards-app`,
      `b deployed ${live[1].name} shards-app`,
    ]);
    for (const c of live) expect(await objectUids(c)).to.have.length(2);

    const upMetrics = () => fs.readFileSync(path.join(metricsDir, "pulumi-fleet-fleetsh.a-up.prom"), "utf8");
    const ranAt = (text: string) => Number(/^pulumi_fleet_run_timestamp_seconds\{[^}]*\} (\S+)$/m.exec(text)![1]);
    const afterUp = upMetrics();
    expect(afterUp).to.match(/^pulumi_fleet_engine_resources\{/m);

    // Nothing changed since: both shards are left out, without running the engine.
    const again = ok(cli("fleet.ts", ["up", "--stack", "fleetsh"]));
    expect(again.err).to.contain("[a] fleetsh.a left out: inputs unchanged since its last successful up").and.contain("0 of 2 shards");
    expect(again.out).to.not.contain("Deployed bundle");
    // A left-out shard still reports a successful up (else "no successful up for a day" would fire), with no engine steps.
    const leftOut = upMetrics();
    expect(leftOut)
      .to.match(/^pulumi_fleet_run_success\{[^}]*\} 1$/m)
      .and.not.match(/^pulumi_fleet_engine_resources\{/m);
    expect(ranAt(leftOut)).to.be.greaterThan(ranAt(afterUp));
    // A shard's stack run on its own, as a CI matrix job runs it, is left out the same way.
    expect(ok(cli("fleet.ts", ["up", "--stack", "fleetsh.a"])).err).to.contain("fleetsh.a left out: inputs unchanged since its last successful up");

    // While a rollback is pinned on a shard, its up re-applies the pinned run whatever its inputs: never left out.
    const runs = runsStore(resolveBackend({ stateDir: path.join(work, "state") }), PROJECT_NAME, "fleetsh.a");
    const record = (await runs.read())!;
    const last = record.runs[record.runs.length - 1];
    await runs.write({ ...record, pin: { run: last, by: last.id, who: "test", at: new Date().toISOString(), over: last.commits } });
    const pinned = ok(cli("fleet.ts", ["up", "--stack", "fleetsh"]));
    expect(pinned.err).to.contain("[b] fleetsh.b left out").and.contain("1 of 2 shards").and.not.contain("[a] fleetsh.a left out");
    await runs.write(record);

    const md = path.join(work, "summary.md");
    ok(cli("fleet.ts", ["preview", "--stack", "fleetsh", "--expect-no-changes", "--all-shards", "--summary-md", md]));
    const summary = fs.readFileSync(md, "utf8");
    expect(summary)
      .to.contain("## pulumi-fleet preview of environment `fleetsh` (2 shards)")
      .and.contain("| a | fleetsh.a | ok | none |")
      .and.contain("### pulumi-fleet preview of stack `fleetsh.b`");

    const status = JSON.parse(ok(cli("fleet.ts", ["status", "--stack", "fleetsh", "--json", "--quiet"])).out);
    expect(status.clusters.map((c: any) => c.cluster)).to.deep.equal(live.map((c) => c.name));
    expect(status.gitRepos[0]).to.include({ gitRepo: "shards", desiredReadyClusters: 2 });
  });

  it("a shard that fails does not stop the other, and the run exits non-zero naming it", () => {
    // Shard b's stack locked by an update on another host: it fails at once; shard a runs to the end.
    const lockDir = path.join(work, "state", ".pulumi", "locks", "organization", "pulumi-fleet", "fleetsh.b");
    fs.mkdirSync(lockDir, { recursive: true });
    fs.writeFileSync(
      path.join(lockDir, "11111111-2222-3333-4444-555555555555.json"),
      JSON.stringify({ pid: 1, username: "someone", hostname: "elsewhere", timestamp: new Date().toISOString() }),
    );
    const r = cli("fleet.ts", ["up", "--stack", "fleetsh", "--all-shards"]);
    fs.rmSync(lockDir, { recursive: true, force: true });
    expect(r.code).to.not.equal(0);
    expect(r.out)
      .to.match(/fleetsh\.a: ok/)
      .and.match(/fleetsh\.b: FAILED/);
    expect(r.err).to.contain("up failed on shard(s) b; the other shards ran to the end");
  });

  it("a shard whose only trouble is a cluster it cannot read exits 3, and so does the environment; the other shard is ok", async () => {
    const state = liveClusters();
    const down = live[1];
    await stopComponent(state, down, "kube-apiserver");
    try {
      const r = cli("fleet.ts", ["status", "--stack", "fleetsh"]);
      expect(r.code, r.all.slice(-3000)).to.equal(EXIT.clustersUnreachable);
      expect(r.out)
        .to.match(/fleetsh\.[ab]: a cluster could not be read/)
        .and.match(/fleetsh\.[ab]: ok/);
      expect(r.err).to.match(/status of environment fleetsh: shard\(s\) [ab] could not read a cluster; every other cluster was done/);
    } finally {
      await startComponent(state, down, "kube-apiserver");
    }
  });

  it(`moving a cluster between shards moves its state: every object and the agent pod keep their UIDs; each shard's next update changes only its provider's configuration`, async () => {
    const objectsBefore = await objectUids(live[1]);
    const agentBefore = await agentPods(live[1]);
    expect(agentBefore).to.have.length(1);
    define("a");
    const refused = cli("fleet.ts", ["preview", "--stack", "fleetsh"]);
    expect(refused.code, "an edited definition is refused until the shards are applied").to.not.equal(0);
    expect(ok(cli("shards.ts", ["--stack", "fleetsh"])).out).to.contain(`move ${live[1].name}: b -> a`);
    const applied = ok(cli("shards.ts", ["--stack", "fleetsh", "--apply"]));
    expect(applied.out).to.contain(`${live[1].name}: moved`).and.contain("(pulumi state move)");
    // --all-shards: the engine previews both shards, whatever their inputs. Each shard's one provider
    // changes its configuration (the moved cluster's access leaves b's, joins a's; the copy of b's that
    // came with the pairs leaves a's state): state only, nothing else.
    const previewed = ok(cli("fleet.ts", ["preview", "--stack", "fleetsh", "--all-shards"]));
    expect(previewed.err).to.contain("2 of 2 shards");
    // The engine's steps per shard (the preview's last line): a updates its provider and drops b's copy; b updates its
    // provider and drops the render only the moved cluster's pairs named (a BundleContent: state only; a holds the
    // same render for its own cluster, so it creates none).
    const summary = (shard: string) =>
      (new RegExp(`^\\[${shard}\\] .*preview of stack fleetsh\\.${shard} succeeded .*; engine steps: (.*)$`, "m").exec(previewed.out)?.[1] ?? "")
        .split(", ")
        .sort();
    expect([summary("a"), summary("b")], previewed.out.slice(-3000)).to.deep.equal([
      ["1 delete", "1 update"],
      ["1 delete", "1 update"],
    ]);
    ok(cli("fleet.ts", ["up", "--stack", "fleetsh"]));
    ok(cli("fleet.ts", ["preview", "--stack", "fleetsh", "--expect-no-changes", "--all-shards"]));
    expect(await objectUids(live[1])).to.deep.equal(objectsBefore);
    expect(await agentPods(live[1]), "the agent was not restarted").to.deep.equal(agentBefore);
    // The moved cluster is now shard a's: a prune from a reaches it, and b no longer holds it.
    const exported = spawnSync(
      process.execPath,
      [path.join(PROJECT_DIR, "scripts/run-ts.js"), path.join(PROJECT_DIR, "scripts/pulumi.ts"), "stack", "export", "--stack", "fleetsh.b"],
      { cwd: PROJECT_DIR, env, encoding: "utf8", maxBuffer: 1 << 28 },
    );
    expect(exported.status, exported.stderr).to.equal(0);
    const urns: string[] = (JSON.parse(exported.stdout).deployment.resources ?? []).map((r: { urn: string }) => r.urn);
    expect(urns.filter((u) => u.endsWith(`::${live[1].name}`) || u.includes(`::${live[1].name}/`))).to.deep.equal([]);
  });

  it("a cluster removed from the definition, its removal never deployed, then added back in another shard, moves from the state that still deploys it: its objects keep their UIDs", async () => {
    const objectsBefore = await objectUids(live[1]);
    const agentBefore = await agentPods(live[1]);
    // Removed and applied: shard a's file no longer names live-2, but no up ran, so a's state still deploys it.
    define("none");
    ok(cli("shards.ts", ["--stack", "fleetsh", "--apply"]));
    // Back, in shard b: no file named it, so the files alone call it new; a's state says it moves from a.
    define("b");
    expect(ok(cli("shards.ts", ["--stack", "fleetsh"])).out).to.contain(`move ${live[1].name}: a -> b`);
    expect(ok(cli("shards.ts", ["--stack", "fleetsh", "--apply"])).out).to.contain(`${live[1].name}: moved`);
    // Both shards' updates: had a's state kept live-2, a's would delete the objects b now deploys.
    ok(cli("fleet.ts", ["up", "--stack", "fleetsh", "--all-shards"]));
    ok(cli("fleet.ts", ["preview", "--stack", "fleetsh", "--expect-no-changes", "--all-shards"]));
    expect(await objectUids(live[1])).to.deep.equal(objectsBefore);
    expect(await agentPods(live[1]), "the agent was not restarted").to.deep.equal(agentBefore);
  });

  it("the Pulumi Kubernetes Operator's Stack resources pass a server-side dry run against the operator's own CRD", async () => {
    const crdFile = spawnSync("bash", [path.join(PROJECT_DIR, "tools/operator-crd.sh")], { encoding: "utf8" });
    expect(crdFile.status, crdFile.stderr).to.equal(0);
    const crd = YAML.parse(fs.readFileSync(crdFile.stdout.trim(), "utf8"));
    const c = live[0];
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
    if (!(await kubeGet(c, crdPath))) await kubeRequest(c, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", { body: crd });
    try {
      await eventually(
        "the Stack CRD established",
        () => kubeGet(c, crdPath),
        (got: any) => got?.status?.conditions?.find((x: any) => x.type === "Established")?.status === "True",
        30_000,
      );
      const out = ok(
        cli("shards.ts", ["--stack", "fleetsh", "--operator-stacks", "--repo", "https://git.example.com/fleet.git", "--namespace", "default"]),
      ).out;
      const docs = YAML.parseAllDocuments(out).map((d) => d.toJSON());
      expect(docs.map((d) => d.spec.stack)).to.deep.equal(["fleetsh.a", "fleetsh.b"]);
      for (const doc of docs) {
        const created = await kubeRequest(c, "POST", "/apis/pulumi.com/v1/namespaces/default/stacks?dryRun=All&fieldValidation=Strict", { body: doc });
        expect(created.spec.envRefs.PULUMI_BACKEND_URL.secret.name).to.equal("pulumi-fleet-backend");
      }
      // The dry run validates for real: an unknown field and a missing stack name are refused.
      const bad = { ...docs[0], spec: { ...docs[0].spec, stack: undefined, noSuchField: true } };
      let refused = "";
      await kubeRequest(c, "POST", "/apis/pulumi.com/v1/namespaces/default/stacks?dryRun=All&fieldValidation=Strict", { body: bad }).catch((e) => {
        refused = String(e.message);
      });
      expect(refused).to.match(/noSuchField|spec\.stack/);
      expect(await kubeList(c, "/apis/pulumi.com/v1/namespaces/default/stacks")).to.have.length(0);
    } finally {
      await kubeRequest(c, "DELETE", crdPath);
    }
  });
});
