/**
 * The attack suite between GitRepos (issue 41): a GitRepo is a team's boundary, and its content is
 * written by someone with push access to that GitRepo only. One stack, two GitRepos on the live clusters
 * (test/support/teams-stack.ts): "victim" on the production and the shared dev cluster, with a Secret
 * holding a canary; "attacker" on the dev cluster, as a service account that RBAC lets write over the
 * victim's ConfigMaps, Secrets and namespace. Each attack is one push of the attacker's, beside a push of
 * the victim's, through `preview` and `up`; each must leave: the attacker's attack bundles failing alone
 * (its own bundle deploys), naming the field and the stack setting; the victim's objects its own (same
 * UIDs) at its latest commit; nothing of the attacker outside its cluster and namespace; the canary in
 * no output, summary, error or state.
 */
import { expect } from "chai";
import { kubeGet } from "../../automation/clusters/kube-client";
import { NESTED_FOREVER } from "../support/attack-content";
import { CONFIGMAP } from "../support/git-fixtures";
import { ATTACKER_NS, TeamsStack, VICTIM_NS } from "../support/teams-stack";
import { withEnv } from "../support/env";

const FLEET_YAML = `defaultNamespace: ${ATTACKER_NS}\n`;
const chart = (dir: string, fleetYaml: string, template: string) => ({
  [`${dir}/fleet.yaml`]: `${fleetYaml}helm:\n  chart: ./chart\n`,
  [`${dir}/chart/Chart.yaml`]: `apiVersion: v2\nname: ${dir}\nversion: 0.1.0\n`,
  [`${dir}/chart/templates/t.yaml`]: template,
});
/** The victim's Secret, read by a template (the attacker's service account may read it: only the lookup scope stops it). */
const LOOKUP = `lookup "v1" "Secret" "${VICTIM_NS}" "victim-db"`;

describe("attacks between GitRepos: one team's content against another's, on live clusters (issue 41)", function () {
  this.timeout(15 * 60_000);
  const figures: string[] = [];
  after(() => console.log(`      ${figures.join("\n      ")}`));
  const t = new TeamsStack();
  t.register();

  it("bundle name: fleet.yaml `name:` equal to the victim's bundle is the attacker's own bundle, in either order; dropping it prunes only its own", async () => {
    t.commitVictim();
    t.commitAttacker({ "evil/fleet.yaml": `name: victim-app\n${FLEET_YAML}`, "evil/cm.yaml": CONFIGMAP("attack-same-name") }, "a bundle named as the victim's");
    await t.expectContained(await t.attack(), {});
    expect(
      await kubeGet(t.dev, `/api/v1/namespaces/${ATTACKER_NS}/configmaps/attack-same-name`),
      "the attacker's victim-app deployed in its namespace",
    ).to.not.equal(undefined);
    // The attacker's GitRepo listed first: plan order must not make its victim-app the victim's.
    t.commitVictim();
    await t.expectContained(await t.attack({ attackerFirst: true }), {});
    t.commitVictim();
    t.commitAttacker({}, "drop the bundle named as the victim's");
    await t.expectContained(await t.attack({ attackerFirst: true }), {});
    expect(await kubeGet(t.dev, `/api/v1/namespaces/${ATTACKER_NS}/configmaps/attack-same-name`), "pruned: its own").to.equal(undefined);
  });

  it("clusters: overrideTargets reaching the production cluster is refused; nothing lands there", async () => {
    t.commitVictim();
    t.commitAttacker(
      {
        "evil-prod/fleet.yaml": `${FLEET_YAML}overrideTargets:\n  - clusterSelector:\n      matchLabels: {env: production}\n`,
        "evil-prod/cm.yaml": CONFIGMAP("attack-override"),
        "evil-all/fleet.yaml": `${FLEET_YAML}overrideTargets:\n  - clusterName: ${t.prod.name}\n  - clusterName: ${t.dev.name}\n`,
        "evil-all/cm.yaml": CONFIGMAP("attack-override-all"),
      },
      "reach production",
    );
    const refused = [
      new RegExp(`overrideTargets reaches cluster\\(s\\) ${t.prod.name}, outside the GitRepo's targets`),
      /gitRepos\[attacker\]\.allowOverrideTargets: true/,
    ];
    await t.expectContained(await t.attack(), { "attacker-evil-prod": refused, "attacker-evil-all": refused });
  });

  it("namespace: a Namespace named as the victim's with helm.takeOwnership is refused, allowed to adopt or not; dropping that bundle leaves the victim's namespace", async () => {
    const files = {
      "ns/fleet.yaml": `${FLEET_YAML}helm:\n  takeOwnership: true\n`,
      "ns/cm.yaml": CONFIGMAP("attack-ns"),
      "ns/ns.yaml": `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${VICTIM_NS}\n  labels: {taken-by: attacker}\n`,
    };
    t.commitVictim();
    t.commitAttacker(files, "take the victim's namespace");
    await t.expectContained(await t.attack(), {
      "attacker-ns": [/helm\.takeOwnership: adopting objects that already exist/, /gitRepos\[attacker\]\.allowTakeOwnership: true/],
    });
    // The stack allows adopting: still never what another GitRepo's deployments use.
    t.commitVictim();
    t.commitAttacker(files, "take the victim's namespace, adoption allowed");
    await t.expectContained(await t.attack({ attacker: { allowTakeOwnership: true } }), {
      "attacker-ns": [new RegExp(`Namespace ${VICTIM_NS} is used on this cluster by GitRepo victim`)],
    });
    t.commitVictim();
    t.commitAttacker({}, "drop the namespace bundle");
    await t.expectContained(await t.attack({ attacker: { allowTakeOwnership: true } }), {});
    expect((await kubeGet(t.dev, `/api/v1/namespaces/${VICTIM_NS}`)).metadata.labels?.["taken-by"], "the namespace's labels are not the attacker's").to.equal(
      undefined,
    );
  });

  it("object squatting: the victim's ConfigMap and Secret declared by the attacker (listed first, adoption allowed or not) fail the attacker; the victim updates on", async () => {
    const squat = (fleetYaml: string) => ({
      "evil/fleet.yaml": fleetYaml,
      "evil/cm.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: victim-config\n  namespace: ${VICTIM_NS}\ndata:\n  version: pwned\n`,
      "evil/secret.yaml": `apiVersion: v1\nkind: Secret\nmetadata:\n  name: victim-db\n  namespace: ${VICTIM_NS}\nstringData:\n  password: pwned\n`,
    });
    const owned =
      /(ConfigMap victim-prod\/victim-config|Secret victim-prod\/victim-db) is also deployed by bundle victim-app \(GitRepo victim\) on this cluster, which deployed it before and keeps it/;
    t.commitVictim();
    t.commitAttacker(squat(FLEET_YAML), "squat the victim's objects");
    await t.expectContained(await t.attack({ attackerFirst: true }), { "attacker-evil": [owned] });
    t.commitVictim();
    t.commitAttacker(squat(`${FLEET_YAML}helm:\n  takeOwnership: true\n`), "squat the victim's objects, adopting");
    await t.expectContained(await t.attack({ attackerFirst: true, attacker: { allowTakeOwnership: true } }), { "attacker-evil": [owned] });
  });

  it("hooks: a Helm hook that would replace the victim's ConfigMap (before-hook-creation deletes first) is refused as the set's objects are; so is one outside allowedTargetNamespaces", async () => {
    const hook = (name: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${VICTIM_NS}\n  annotations: {helm.sh/hook: "pre-install,pre-upgrade"}\ndata:\n  version: pwned\n`;
    t.commitVictim();
    t.commitAttacker(chart("hook-squat", FLEET_YAML, hook("victim-config")), "a hook over the victim's ConfigMap");
    await t.expectContained(await t.attack({ attackerFirst: true }), {
      "attacker-hook-squat": [/ConfigMap victim-prod\/victim-config is also deployed by bundle victim-app \(GitRepo victim\)/],
    });
    t.commitVictim();
    t.commitAttacker(chart("hook-elsewhere", FLEET_YAML, hook("attack-hook")), "a hook in the victim's namespace");
    await t.expectContained(await t.attack({ attacker: { allowedTargetNamespaces: [ATTACKER_NS] } }), {
      "attacker-hook-elsewhere": [/object\(s\) outside gitRepos\[attacker\]\.allowedTargetNamespaces/],
    });
    expect(await kubeGet(t.dev, `/api/v1/namespaces/${VICTIM_NS}/configmaps/attack-hook`), "no hook of the attacker's ran in the victim's namespace").to.equal(
      undefined,
    );
  });

  it("secrets: a lookup of the victim's Secret into a ConfigMap and into a `fail` message is refused unread; so is moving into the victim's namespace to read it", async () => {
    t.commitVictim();
    t.commitAttacker(
      {
        ...chart(
          "steal",
          FLEET_YAML,
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: attack-stolen\ndata:\n  password: {{ (${LOOKUP}).data.password | default "" | b64dec | quote }}\n`,
        ),
        ...chart("leak", FLEET_YAML, `{{- $s := ${LOOKUP} }}\n{{- if $s }}{{ fail (printf "the password is %s" ($s.data.password | b64dec)) }}{{ end }}\n`),
      },
      "read the victim's secret",
    );
    const refused = [/a template's lookup reads Secret victim-db in namespace victim-prod/, /gitRepos\[attacker\]\.allowedTargetNamespaces/];
    await t.expectContained(await t.attack(), { "attacker-steal": refused, "attacker-leak": refused });
    // Placed in the victim's namespace, the lookup would be its own namespace's: the stack's namespaces refuse the placement.
    const inVictim = `defaultNamespace: ${VICTIM_NS}\n`;
    t.commitVictim();
    t.commitAttacker(
      {
        ...chart(
          "steal",
          inVictim,
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: attack-stolen\n  namespace: ${ATTACKER_NS}\ndata:\n  password: {{ (${LOOKUP.replace(`"${VICTIM_NS}"`, ".Release.Namespace")}).data.password | default "" | b64dec | quote }}\n`,
        ),
      },
      "read the victim's secret from its namespace",
    );
    await t.expectContained(await t.attack({ attacker: { allowedTargetNamespaces: [ATTACKER_NS] } }), {
      "attacker-steal": [/defaultNamespace: namespace victim-prod is not in gitRepos\[attacker\]\.allowedTargetNamespaces/],
    });
  });

  it("time: eight looping bundles cost their GitRepo one render budget, not eight job limits; the victim deploys in the same up", async () => {
    const LOOPS = 8;
    const limits = { PULUMI_FLEET_RENDER_TIMEOUT_SECONDS: "3", PULUMI_FLEET_GITREPO_RENDER_SECONDS: "5" };
    // The same two pushes without the loops: what an up costs here.
    t.commitVictim();
    t.commitAttacker({}, "calm");
    const calm = await withEnv(limits, () => t.attack({ noPreview: true }));
    await t.expectContained(calm, {});
    t.commitVictim();
    const loops = Object.fromEntries(
      Array.from({ length: LOOPS }, (_, i) => `loop${i}`).map((b) => [b, chart(b, FLEET_YAML, CONFIGMAP("attack-loop", { x: NESTED_FOREVER }))]),
    );
    t.commitAttacker(Object.assign({}, ...Object.values(loops)), "loop forever, eight times");
    const run = await withEnv(limits, () => t.attack({ noPreview: true }));
    figures.push(`up with ${LOOPS} looping bundles: ${(run.ms / 1000).toFixed(1)} s, the same up without them ${(calm.ms / 1000).toFixed(1)} s`);
    const limit = /longer than the limit of (5 s per GitRepo \(PULUMI_FLEET_GITREPO_RENDER_SECONDS\)|3 s per job \(PULUMI_FLEET_RENDER_TIMEOUT_SECONDS\))/;
    await t.expectContained(run, Object.fromEntries(Object.keys(loops).map((b) => [`attacker-${b}`, [limit]])));
    expect(run.failures.filter((f) => /PULUMI_FLEET_GITREPO_RENDER_SECONDS/.test(f.message)).length, "stopped by the GitRepo's budget").to.be.greaterThan(0);
    // One budget (5 s) and slack; eight job limits one after the other would add 24 s.
    expect(run.ms - calm.ms, "the loops' cost").to.be.lessThan(14_000);
  });

  it("bounds: a .fleetignore over PULUMI_FLEET_MAX_IGNORE_STEPS fails its bundle alone", async () => {
    t.commitVictim();
    t.commitAttacker(
      {
        "ignore/fleet.yaml": FLEET_YAML,
        "ignore/cm.yaml": CONFIGMAP("attack-ignore"),
        "ignore/.fleetignore": Array.from({ length: 300 }, (_, i) => `*q*r*s*t*u*v*w*x*y*z${i}\n`).join(""),
        ...Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`ignore/${"a".repeat(150)}${i}.yaml`, "# nothing\n"])),
      },
      "slow to ignore",
    );
    const run = await withEnv({ PULUMI_FLEET_MAX_IGNORE_STEPS: "200000" }, () => t.attack());
    figures.push(`up with a costly .fleetignore: ${(run.ms / 1000).toFixed(1)} s`);
    await t.expectContained(run, { "attacker-ignore": [/took more than 200000 steps \(limit PULUMI_FLEET_MAX_IGNORE_STEPS/] });
  });

  it("bounds: a directory tree deeper than PULUMI_FLEET_MAX_PATH_DEPTH fails the attacker's GitRepo alone", async () => {
    t.commitVictim();
    t.commitAttacker({ "deep/fleet.yaml": FLEET_YAML, [`deep/${"d/".repeat(20)}cm.yaml`]: CONFIGMAP("attack-deep") }, "deep");
    const run = await withEnv({ PULUMI_FLEET_MAX_PATH_DEPTH: "12" }, () => t.attack());
    figures.push(`up with a deep tree: ${(run.ms / 1000).toFixed(1)} s`);
    // Found while discovering the GitRepo's bundles: the whole GitRepo may fail (its own bundle too), no other.
    await t.expectContained(run, {}, { gitRepoWide: /path is more than 12 directories deep \(limit PULUMI_FLEET_MAX_PATH_DEPTH\)/ });
  });

  // Last: while the hole its drop step shows is open, every later up of the stack fails.
  it("identity: serviceAccount fleet-agent in a targetCustomization is refused, in fleet.yaml replaced by the stack's `restricted`; no ClusterRoleBinding; dropping them", async () => {
    const crb = (name: string) =>
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: " +
      name +
      `\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: default, namespace: ${ATTACKER_NS}}]\n`;
    t.commitVictim();
    t.commitAttacker(
      {
        "evil/fleet.yaml": `${FLEET_YAML}targetCustomizations:\n  - name: dev\n    clusterSelector: {}\n    serviceAccount: fleet-agent\n`,
        "evil/crb.yaml": crb("attack-escalated"),
        "evil-top/fleet.yaml": `${FLEET_YAML}serviceAccount: fleet-agent\n`,
        "evil-top/crb.yaml": crb("attack-escalated-top"),
      },
      "deploy as the agent's account",
    );
    // The stack's serviceAccount replaces fleet.yaml's (as Fleet's GitRepo does): that bundle deploys as
    // `restricted`, whose ClusterRoleBinding the API server refuses.
    await t.expectContained(
      await t.attack(),
      {
        "attacker-evil": [
          /targetCustomizations\[dev\]\.serviceAccount: service account fleet-agent is refused/,
          /gitRepos\[attacker\]\.allowedServiceAccounts/,
        ],
      },
      { applyRefused: { "attacker-evil-top": [/attack-escalated-top/, /system:serviceaccount:teams-agents:restricted/] } },
    );
    // Dropped, nothing of them is left to delete: the drop must not fail the update.
    t.commitVictim();
    t.commitAttacker({}, "drop the escalations");
    await t.expectContained(await t.attack(), {});
  });
});
