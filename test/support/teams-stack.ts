/**
 * The two-team stack of the attack suite between GitRepos (test/e2e/attacks-between-teams.test.ts), on
 * the live clusters. GitRepo "victim" deploys bundle victim-app (a ConfigMap, and a Secret holding this
 * run's canary) into namespace victim-prod on the production cluster and on the dev cluster (the dev
 * cluster is shared: squatting, namespaces and lookups need a cluster both teams deploy to). GitRepo
 * "attacker" targets the dev cluster only, deploys as the account `restricted`, and keeps a bundle of
 * its own (attacker-app, in attacker-dev) beside each attack, which must deploy on: failures are per
 * bundle. `restricted` may write ConfigMaps, Secrets and Namespaces anywhere and read any Secret, and
 * nothing else: RBAC stops no attack on the victim, so only the project's own checks do.
 * Both repositories are git repositories (file:// URLs), fetched as any remote one.
 */
import { expect } from "chai";
import * as crypto from "node:crypto";
import * as path from "node:path";
import { kubeGet, kubeList, kubeRequest } from "../../automation/clusters/kube-client";
import { LocalCluster } from "../../automation/clusters/local-clusters";
import * as ops from "../../automation/operations";
import { openStack, runCli } from "../../automation/engine/stack";
import { toolchain } from "../../automation/engine/toolchain";
import { ClusterConfig, StackConfig } from "../../core/config/stack";
import { GitRepoConfig } from "../../core/config/git-repo";
import { DeploymentFailure } from "../../core/plan/failures";
import { CONFIGMAP, gitRepoConfig, tempDir, TestRepo } from "./git-fixtures";
import { liveClusterConfig } from "./live-stack";
import { liveClusters } from "./live-clusters";
import { eventually } from "./eventually";

export const VICTIM_NS = "victim-prod";
export const ATTACKER_NS = "attacker-dev";
const AGENTS = "teams-agents";
const STACK = "teams";
const RBAC = "/apis/rbac.authorization.k8s.io/v1";

/** The victim's database password: it must appear nowhere but on the victim's clusters (and the victim's own state). */
export const CANARY = `victim-db-${crypto.randomBytes(8).toString("hex")}`;
const b64 = (s: string) => Buffer.from(s).toString("base64");
export const leaks = (text: string) => [CANARY, b64(CANARY)].filter((v) => text.includes(v));

const VICTIM_FILES = (version: number) => ({
  "app/fleet.yaml": `defaultNamespace: ${VICTIM_NS}\n`,
  "app/cm.yaml": CONFIGMAP("victim-config", { version: String(version) }),
  "app/secret.yaml": `apiVersion: v1\nkind: Secret\nmetadata:\n  name: victim-db\ndata:\n  password: ${b64(CANARY)}\n`,
});
const ATTACKER_APP = (round: number) => ({
  "app/fleet.yaml": `defaultNamespace: ${ATTACKER_NS}\n`,
  "app/cm.yaml": CONFIGMAP("attacker-config", { round: String(round) }),
});

interface Seen {
  uid: string;
  data?: Record<string, string>;
}
type VictimView = Record<string, { configMap?: Seen; secret?: Seen; namespace?: Seen & { deleting: boolean } }>;

export interface AttackRun {
  preview?: ops.PreviewResult;
  previewOutput: string;
  /** The failures of `up` (none: it succeeded). */
  failures: DeploymentFailure[];
  upMessage: string;
  upOutput: string;
  ms: number;
}

export interface AttackOptions {
  /** Settings of the attacker's stack entry for this attack. */
  attacker?: Partial<GitRepoConfig>;
  /** The attacker's GitRepo listed first (plan order favours it wherever nothing else decides). */
  attackerFirst?: boolean;
  /** Skip the preview (it renders everything once more). */
  noPreview?: boolean;
}

export class TeamsStack {
  prod!: LocalCluster;
  dev!: LocalCluster;
  victim!: TestRepo;
  attacker!: TestRepo;
  /** The victim's commit count: its ConfigMap's `version`. */
  version = 1;
  /** The attacker's commit count: its own ConfigMap's `round`. */
  round = 1;
  private work = tempDir("pf-teams-");
  private before?: VictimView;

  options(o: AttackOptions = {}, over: Partial<ops.OperationOptions> = {}): ops.OperationOptions {
    return {
      stack: STACK,
      stateDir: path.join(this.work, "state"),
      stackConfigDir: this.work,
      config: this.config(o),
      deploy: { cacheRoot: path.join(this.work, "git-cache") },
      env: { PULUMI_CONFIG_PASSPHRASE: STACK },
      ...over,
    };
  }

  config(o: AttackOptions): StackConfig {
    const cluster = (c: LocalCluster, env: string): ClusterConfig => liveClusterConfig(c, { env });
    const victim = gitRepoConfig({
      name: "victim",
      repo: this.victim.url(),
      targets: [
        { name: "production", clusterSelector: { matchLabels: { env: "production" } } },
        { name: "dev", clusterSelector: { matchLabels: { env: "dev" } } },
      ],
    });
    const attacker = gitRepoConfig({
      name: "attacker",
      repo: this.attacker.url(),
      targets: [{ name: "dev", clusterSelector: { matchLabels: { env: "dev" } } }],
      serviceAccount: "restricted",
      ...o.attacker,
    });
    return {
      file: `stacks/Pulumi.${STACK}.yaml`,
      fleetVersion: "0.13.1",
      agent: { namespace: AGENTS, apiServerURL: "https://fleet.example.com" },
      clusterGroups: [],
      clusters: [cluster(this.prod, "production"), cluster(this.dev, "dev")],
      gitRepos: o.attackerFirst ? [attacker, victim] : [victim, attacker],
    } as StackConfig;
  }

  /** A victim commit (its ConfigMap's next version), as a team pushing on while it is attacked. */
  commitVictim(): void {
    this.victim.commit(VICTIM_FILES(++this.version), `victim: version ${this.version}`);
  }

  /** The attacker's whole repository in one push: its own app (next round) and the attack's files. */
  commitAttacker(files: Record<string, string>, message: string): void {
    this.attacker.git("rm", "-rq", "--ignore-unmatch", ".");
    this.attacker.commit({ ...ATTACKER_APP(++this.round), ...files }, message);
  }

  /** The victim's objects on both clusters, as they are now. */
  async victimView(): Promise<VictimView> {
    const view: VictimView = {};
    for (const c of [this.prod, this.dev]) {
      const [cm, secret, ns] = await Promise.all([
        kubeGet(c, `/api/v1/namespaces/${VICTIM_NS}/configmaps/victim-config`),
        kubeGet(c, `/api/v1/namespaces/${VICTIM_NS}/secrets/victim-db`),
        kubeGet(c, `/api/v1/namespaces/${VICTIM_NS}`),
      ]);
      view[c.name] = {
        configMap: cm && { uid: cm.metadata.uid, data: cm.data },
        secret: secret && { uid: secret.metadata.uid, data: secret.data },
        namespace: ns && { uid: ns.metadata.uid, deleting: !!ns.metadata.deletionTimestamp },
      };
    }
    return view;
  }

  /** The victim's objects are the ones it deployed (same UIDs), with its latest commit's data. */
  async expectVictimIntact(): Promise<void> {
    const now = await this.victimView();
    for (const c of [this.prod, this.dev]) {
      const was = this.before![c.name];
      const is = now[c.name];
      expect(is.namespace, `${c.name}: namespace ${VICTIM_NS}`).to.deep.equal({ uid: was.namespace!.uid, deleting: false });
      expect(is.configMap, `${c.name}: the victim's ConfigMap, at its latest commit`).to.deep.equal({
        uid: was.configMap!.uid,
        data: { version: String(this.version) },
      });
      expect(is.secret, `${c.name}: the victim's Secret`).to.deep.equal(was.secret);
    }
  }

  /** What of the attacker is on a cluster: labelled with its GitRepo, or named attack-* (labelled or not). */
  async attackerObjects(c: LocalCluster): Promise<string[]> {
    const kinds: [string, string][] = [
      ["ConfigMap", "/api/v1/configmaps"],
      ["Secret", "/api/v1/secrets"],
      ["Namespace", "/api/v1/namespaces"],
      ["ClusterRoleBinding", `${RBAC}/clusterrolebindings`],
      ["RoleBinding", `${RBAC}/rolebindings`],
    ];
    const found = await Promise.all(
      kinds.map(async ([kind, p]) =>
        (await kubeList(c, p))
          .filter((o) => o.metadata.labels?.["fleet.cattle.io/repo-name"] === "attacker" || o.metadata.name.startsWith("attack-"))
          .map((o) => `${kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`),
      ),
    );
    return found.flat().sort();
  }

  /** Nothing of the attacker's on the production cluster; on the dev cluster, only in its namespace. */
  async expectAttackerConfined(): Promise<void> {
    expect(await this.attackerObjects(this.prod), "the attacker's objects on the production cluster").to.deep.equal([]);
    const outside = (await this.attackerObjects(this.dev)).filter(
      (o) => !o.startsWith(`ConfigMap ${ATTACKER_NS}/`) && !o.startsWith(`Secret ${ATTACKER_NS}/`) && o !== `Namespace ${ATTACKER_NS}`,
    );
    expect(outside, "the attacker's objects outside its namespace on the dev cluster").to.deep.equal([]);
  }

  /** The attacker's own bundle deployed its latest round: its failures were its attack's alone. */
  async expectAttackerAppDeployed(): Promise<void> {
    expect((await kubeGet(this.dev, `/api/v1/namespaces/${ATTACKER_NS}/configmaps/attacker-config`))?.data).to.deep.equal({ round: String(this.round) });
  }

  /**
   * `pulumi stack export`, as anyone with the state backend sees it: the canary may be only in the
   * victim's own BundleDeployments (its Secret is its content, as it is in its git repository).
   */
  async stateLeaks(): Promise<string[]> {
    const state = JSON.parse(await runCli(await openStack(this.options()), ["stack", "export", "--stack", STACK]));
    const own = new RegExp(`::(${this.prod.name}|${this.dev.name})/victim/victim-app$`);
    return (state.deployment.resources as { urn: string }[]).filter((r) => !own.test(r.urn) && leaks(JSON.stringify(r)).length).map((r) => r.urn);
  }

  /**
   * One attack: a preview (its output, summary and failures) and an up. A failure other than bundles
   * failing alone is thrown. The victim's view before it is kept for expectVictimIntact.
   */
  async attack(o: AttackOptions = {}): Promise<AttackRun> {
    this.before ??= await this.victimView();
    const run: AttackRun = { previewOutput: "", failures: [], upMessage: "", upOutput: "", ms: 0 };
    if (!o.noPreview)
      run.preview = await ops.preview(
        this.options(o, {
          onOutput: (t) => {
            run.previewOutput += t;
          },
        }),
      );
    const t = Date.now();
    try {
      await ops.up(
        this.options(o, {
          onOutput: (t) => {
            run.upOutput += t;
          },
        }),
      );
    } catch (err) {
      if (!(err instanceof ops.BundlesFailedError)) throw err;
      run.failures = err.failures;
      run.upMessage = err.message;
    }
    run.ms = Date.now() - t;
    return run;
  }

  /**
   * What every attack must leave: only attacker bundles failed (in the preview and in up), each naming
   * what `messages` says (`applyRefused`: in up only, refused by the API server; `gitRepoWide`: any of
   * its bundles, for a reason found before its bundles are known); the canary nowhere; the victim's objects its own, at its latest commit; the
   * attacker confined, its own bundle deployed.
   */
  async expectContained(
    run: AttackRun,
    messages: Record<string, RegExp[]>,
    o: { applyRefused?: Record<string, RegExp[]>; gitRepoWide?: RegExp } = {},
  ): Promise<void> {
    const bundles = (list: DeploymentFailure[]) => [...new Set(list.map((f) => `${f.gitRepo}/${f.bundle}`))].sort();
    const expected = (m: object) =>
      Object.keys(m)
        .map((b) => `attacker/${b}`)
        .sort();
    if (o.gitRepoWide) {
      // Some or all of the attacker's bundles fail, each with that reason; no other GitRepo's.
      for (const [where, list] of [
        ["the preview", run.preview?.failures ?? []],
        ["up", run.failures],
      ] as const) {
        expect(list.length, `${where} fails the attacker`).to.be.greaterThan(0);
        for (const f of list)
          expect(`${f.gitRepo}: ${f.message}`, `${where}'s failure`)
            .to.match(/^attacker: /)
            .and.match(o.gitRepoWide);
      }
    } else {
      const all = { ...messages, ...o.applyRefused };
      if (run.preview) expect(bundles(run.preview.failures), "the preview's failures").to.deep.equal(expected(messages));
      expect(bundles(run.failures), `up's failures: ${run.upMessage}`).to.deep.equal(expected(all));
      for (const f of run.failures) for (const re of all[f.bundle]) expect(f.message, f.message).to.match(re);
    }
    for (const [where, text] of Object.entries({
      "preview output": run.previewOutput,
      "preview summary": run.preview?.summaryMarkdown ?? "",
      "preview failures": JSON.stringify(run.preview?.failures ?? []),
      "up output": run.upOutput,
      "up's error": run.upMessage,
      "up's failures": JSON.stringify(run.failures),
    }))
      expect(leaks(text), `the victim's secret in the ${where}`).to.deep.equal([]);
    expect(await this.stateLeaks(), "resources of the state holding the victim's secret").to.deep.equal([]);
    await this.expectVictimIntact();
    await this.expectAttackerConfined();
    if (!o.gitRepoWide) await this.expectAttackerAppDeployed();
  }

  /** Registers the hooks: the accounts, both repositories, and a first up deploying both teams. */
  register(): void {
    const self = this; // eslint-disable-line @typescript-eslint/no-this-alias -- mocha's hooks need their own `this` (the timeout)
    before(async function (this: Mocha.Context) {
      this.timeout(20 * 60_000);
      await self.setUp();
    });
    after(async function (this: Mocha.Context) {
      this.timeout(10 * 60_000);
      await self.tearDown();
    });
  }

  private async setUp(): Promise<void> {
    toolchain();
    [this.prod, this.dev] = liveClusters().clusters;
    const post = (p: string, body: object) => kubeRequest(this.dev, "POST", p, { body });
    for (const c of [this.prod, this.dev])
      await kubeRequest(c, "POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: AGENTS } } });
    await post(`/api/v1/namespaces/${AGENTS}/serviceaccounts`, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "restricted" } });
    await post(`${RBAC}/clusterroles`, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "teams-restricted" },
      rules: [{ apiGroups: [""], resources: ["configmaps", "secrets", "namespaces"], verbs: ["get", "list", "watch", "create", "update", "patch", "delete"] }],
    });
    await post(`${RBAC}/clusterrolebindings`, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "teams-restricted" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "teams-restricted" },
      subjects: [{ kind: "ServiceAccount", name: "restricted", namespace: AGENTS }],
    });
    this.victim = new TestRepo(VICTIM_FILES(this.version));
    this.attacker = new TestRepo(ATTACKER_APP(this.round));
    const first = await ops.up(this.options());
    expect(first.events.map((e) => `${e.event} ${e.cluster}/${e.gitRepo}/${e.bundle}`).sort()).to.deep.equal(
      [`deployed ${this.dev.name}/attacker/attacker-app`, `deployed ${this.dev.name}/victim/victim-app`, `deployed ${this.prod.name}/victim/victim-app`].sort(),
    );
  }

  private async tearDown(): Promise<void> {
    // The clusters are cleaned whatever destroy does; its failure is still the test's.
    const destroyed = this.victim
      ? ops.destroy(this.options()).then(
          () => undefined,
          (err: Error) => err,
        )
      : Promise.resolve(undefined);
    const failed = await destroyed;
    const del = async (c: LocalCluster, p: string) => {
      if (await kubeGet(c, p)) await kubeRequest(c, "DELETE", p);
    };
    for (const c of [this.prod, this.dev].filter(Boolean)) {
      for (const ns of [VICTIM_NS, ATTACKER_NS, AGENTS]) await del(c, `/api/v1/namespaces/${ns}`);
      const escalations = (await kubeList(c, `${RBAC}/clusterrolebindings`))
        .filter((b) => b.metadata.name.startsWith("attack-"))
        .map((b) => `${RBAC}/clusterrolebindings/${b.metadata.name}`);
      for (const p of [`${RBAC}/clusterrolebindings/teams-restricted`, `${RBAC}/clusterroles/teams-restricted`, ...escalations]) await del(c, p);
    }
    // A namespace is deleted by its controller after the request: the next file's set-up creates the same ones.
    for (const c of [this.prod, this.dev].filter(Boolean))
      for (const ns of [VICTIM_NS, ATTACKER_NS, AGENTS])
        await eventually(
          `namespace ${ns} gone from ${c.name}`,
          () => kubeGet(c, `/api/v1/namespaces/${ns}`),
          (n) => n === undefined,
          120_000,
        );
    if (failed) throw failed;
  }
}
