/**
 * The importer (core/import/fleet-export.ts, `npm run import`) on Fleet object exports written for
 * these tests (test/fleet-exports/): every mapped field lands where the stack reads it, every field
 * that cannot be mapped is named (comment and stderr), no secret is copied, and the file it writes
 * passes `npm run plan` unchanged.
 */
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { importFleetExport } from "../../core/import/fleet-export";
import { CONFIGMAP, TestRepo } from "../support/git-fixtures";

const ROOT = path.resolve(__dirname, "../..");
const EXPORT = "test/fleet-exports/fleet-default.yaml";
const exportText = () => fs.readFileSync(path.join(ROOT, EXPORT), "utf8");
const configOf = (text: string) => (YAML.parse(text) as { config: Record<string, unknown> }).config;
const tsScript = (script: string, args: string[]) =>
  spawnSync(process.execPath, [path.join(ROOT, "scripts/run-ts.js"), path.join(ROOT, script), ...args], { encoding: "utf8", cwd: ROOT });

describe("importing Fleet's GitRepos, Clusters and ClusterGroups (npm run import)", function () {
  this.timeout(120_000);

  it("maps every field that has a meaning here to the stack key that carries it", () => {
    const result = importFleetExport(exportText(), EXPORT, { workspace: "fleet-default" });
    expect(result.counts).to.deep.equal({ clusters: 3, clusterGroups: 2, gitRepos: 2, helmOps: 0 });
    const config = configOf(result.text);
    expect(Object.keys(config)).to.deep.equal(["pulumi-fleet:agent", "pulumi-fleet:clusters", "pulumi-fleet:clusterGroups", "pulumi-fleet:gitRepos"]);
    // Fleet's agent stays until Fleet goes: this stack deploys none.
    expect(config["pulumi-fleet:agent"]).to.deep.equal({ enabled: false });
    expect(config["pulumi-fleet:clusters"]).to.deep.equal([
      { name: "c-m-dev1", context: "c-m-dev1", labels: { env: "dev" } },
      {
        name: "c-m-prod1",
        context: "c-m-prod1",
        labels: { env: "prod", region: "eu-west", "management.cattle.io/cluster-name": "c-m-prod1" },
        annotations: { "field.cattle.io/description": "prod in Dublin" },
        templateValues: { replicas: 5, ingress: { host: "prod1.example.com" } },
        agent: {
          env: { HTTPS_PROXY: "http://proxy.internal:3128" },
          namespace: "cattle-fleet-system",
          privateRepoURL: "registry.internal:5000",
          tolerations: [{ key: "dedicated", operator: "Equal", value: "fleet", effect: "NoSchedule" }],
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: "node-role.kubernetes.io/control-plane", operator: "DoesNotExist" }] }],
              },
            },
          },
          resources: { limits: { memory: "512Mi" }, requests: { cpu: "100m" } },
          hostNetwork: false,
          pullSecrets: ["registry-internal"],
          priorityClass: { value: 1000, preemptionPolicy: "PreemptLowerPriority" },
          podDisruptionBudget: { maxUnavailable: "1" },
        },
      },
      {
        name: "c-m-prod2",
        context: "c-m-prod2",
        labels: { env: "prod", region: "us-east" },
        paused: { reason: "paused in Fleet (Cluster spec.paused) when it was imported" },
      },
    ]);
    expect(config["pulumi-fleet:clusterGroups"]).to.deep.equal([
      { name: "dev", labels: { tier: "nonprod" }, selector: { matchLabels: { env: "dev" } } },
      { name: "empty", selector: { matchExpressions: [{ key: "pulumi-fleet.io/no-selector-in-fleet", operator: "Exists" }] } },
    ]);
    expect(config["pulumi-fleet:gitRepos"]).to.deep.equal([
      {
        name: "apps",
        repo: "https://git.example.com/platform/apps.git",
        branch: "main",
        targetNamespace: "apps",
        serviceAccount: "deployer",
        helmRepoURLRegex: "^https://charts\\.example\\.com/",
        paths: ["simple", "helm"],
        targets: [
          { name: "dev", clusterGroup: "dev" },
          { name: "eu-prod", clusterSelector: { matchLabels: { env: "prod" }, matchExpressions: [{ key: "region", operator: "In", values: ["eu-west"] }] } },
          { name: "canary", clusterName: "c-m-prod2" },
        ],
        keepResources: true,
        deleteNamespace: true,
        insecureSkipTLSVerify: true,
        takeOwnership: true,
        allowTakeOwnership: true,
        allowOverrideTargets: true,
        caBundle: "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\nZmFrZQ==\n-----END CERTIFICATE-----\n",
        pollingInterval: "1m", // read by npm run watch, as Fleet's controller reads it
      },
      {
        name: "infra",
        repo: "git@git.example.com:platform/infra.git",
        revision: "v1.4.2",
        paused: true,
        disablePolling: true,
        takeOwnership: true,
        allowTakeOwnership: true,
        allowOverrideTargets: true,
      },
    ]);
    // Fleet's behaviour kept where the stack's defaults are stricter, and said so in the file.
    expect(result.text).to.include("# Every GitRepo has allowTakeOwnership and allowOverrideTargets: true, as Fleet behaves");
    // Where it stays stricter, because the importer does not read the content: valuesFrom and lookup's namespaces.
    expect(result.text).to.include("# fleet.yaml helm.valuesFrom and Helm's lookup read only the deployment's namespace and allowedTargetNamespaces here");
  });

  it("names every field it cannot map, in the file beside its object and in the notes; copies no secret", () => {
    const result = importFleetExport(exportText(), EXPORT, { workspace: "fleet-default" });
    expect(result.notes.map((n) => `${n.object} ${n.field}`)).to.deep.equal([
      "Secret fleet-default/apps-git-auth ",
      "Cluster fleet-default/c-m-dev1 context",
      "Cluster fleet-default/c-m-prod1 context",
      "Cluster fleet-default/c-m-prod1 spec.agentEnvVars",
      "Cluster fleet-default/c-m-prod1 spec.clientID",
      "Cluster fleet-default/c-m-prod1 spec.redeployAgentGeneration",
      "Cluster fleet-default/c-m-prod2 context",
      "ClusterGroup fleet-default/empty spec.selector",
      "GitRepo fleet-default/apps metadata.labels",
      "GitRepo fleet-default/apps spec.clientSecretName",
      "GitRepo fleet-default/apps spec.helmSecretName",
      "GitRepo fleet-default/apps spec.webhookSecret",
      "GitRepo fleet-default/apps spec.forceSyncGeneration",
      "GitRepo fleet-default/apps spec.correctDrift",
      "GitRepo fleet-default/infra spec.helmSecretNameForPaths",
      "GitRepo fleet-default/infra spec.imageScanInterval",
      "GitRepo fleet-default/infra spec.imageScanCommit",
      "GitRepo fleet-default/infra spec.ociRegistrySecret",
      "GitRepo fleet-default/infra spec.bundles",
      "GitRepo fleet-default/infra spec.newFieldFromTheFuture",
    ]);
    for (const n of result.notes.filter((x) => x.field)) expect(result.text, n.field).to.include(`# ${n.field}: ${n.text}`);
    expect(result.notes.find((n) => n.field === "context" && n.object.endsWith("c-m-prod2"))!.text).to.include(
      "Secret fleet-clusters/c-m-prod2-kubeconfig, which is not copied",
    );
    // The Secret in the export, its value, and the secrets Fleet's objects name never reach the file as values.
    expect(result.text).to.not.match(/c2VjcmV0LXRva2Vu|secret-token/);
    expect(result.text).to.not.include("last-applied-configuration");
    expect((configOf(result.text)["pulumi-fleet:gitRepos"] as object[]).filter((r) => "auth" in r || "helmSecret" in r)).to.deep.equal([]);
  });

  it("reads multi-document YAML as it reads a List; several workspaces need --workspace; bad input names the file and object", () => {
    const list = YAML.parse(exportText()) as { items: unknown[] };
    const multi = list.items.map((i) => YAML.stringify(i)).join("---\n");
    expect(importFleetExport(multi, "x.yaml", { workspace: "fleet-default" }).text).to.equal(
      importFleetExport(exportText(), "x.yaml", { workspace: "fleet-default" }).text,
    );
    expect(() => importFleetExport(exportText(), EXPORT)).to.throw(`${EXPORT}: holds several Fleet workspaces (fleet-default, fleet-local)`);
    expect(configOf(importFleetExport(exportText(), EXPORT, { workspace: "fleet-local" }).text)["pulumi-fleet:clusters"]).to.deep.equal([
      { name: "local", context: "local" },
    ]);
    expect(() => importFleetExport(exportText(), EXPORT, { workspace: "nope" })).to.throw(
      'has no objects in workspace "nope" (it has fleet-default, fleet-local)',
    );
    expect(() => importFleetExport("a: [", "bad.yaml")).to.throw("bad.yaml: document 1 is not valid YAML");
    const gitRepo = (name: string, spec: object) =>
      YAML.stringify({ apiVersion: "fleet.cattle.io/v1alpha1", kind: "GitRepo", metadata: { name, namespace: "w" }, spec });
    expect(() => importFleetExport(gitRepo("team.apps", { repo: "https://x/y.git" }), "e.yaml")).to.throw(
      "e.yaml: GitRepo w/team.apps: its name is not usable",
    );
    expect(() => importFleetExport(gitRepo("apps", {}), "e.yaml")).to.throw("e.yaml: GitRepo w/apps: spec.repo is missing");
    expect(() =>
      importFleetExport(
        gitRepo("apps", { repo: "https://x/y.git", targets: [{ clusterSelector: { matchExpressions: [{ key: "a", operator: "in" }] } }] }),
        "e.yaml",
      ),
    ).to.throw("targets[0].clusterSelector.matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist");
    expect(() => importFleetExport("", "empty.yaml")).to.throw("empty.yaml: holds no Fleet GitRepo, HelmOp, Cluster or ClusterGroup");
  });

  it("downstreamResources of the exported Bundles: each Secret a note with the entry and the command that sets it encrypted, never a value or an empty Secret", () => {
    const item = (kind: string, name: string, extra: object) => ({
      apiVersion: "fleet.cattle.io/v1alpha1",
      kind,
      metadata: { name, namespace: "w", ...extra },
      spec: {},
    });
    const text = YAML.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [
        { ...item("GitRepo", "apps", {}), spec: { repo: "https://git.example.com/apps.git", targetNamespace: "team-a" } },
        {
          ...item("Bundle", "apps-web", { labels: { "fleet.cattle.io/repo-name": "apps" } }),
          spec: {
            targetNamespace: "team-a",
            downstreamResources: [
              { kind: "Secret", name: "db" },
              { kind: "ConfigMap", name: "settings" },
            ],
            targets: [{ name: "prod", downstreamResources: [{ kind: "Secret", name: "prod-only" }] }],
          },
        },
        {
          ...item("Bundle", "other-x", { labels: { "fleet.cattle.io/repo-name": "other" } }),
          spec: { downstreamResources: [{ kind: "Secret", name: "not-ours" }] },
        },
        { apiVersion: "v1", kind: "Secret", metadata: { name: "db", namespace: "w" }, data: { password: "c2VjcmV0LXRva2Vu" } },
      ],
    });
    const result = importFleetExport(text, "w.yaml");
    const notes = result.notes.map((n) => `${n.field}: ${n.text}`);
    expect(notes).to.include(
      "downstreamResources: Fleet copies Secret w/db into namespace team-a for Bundle apps-web: not copied (no export holds its values): " +
        "add {kind: Secret, name: db, namespace: team-a} as downstreamResources[0] (with its type, if not Opaque), then set each of its keys encrypted: " +
        "npm run pulumi -- config set --secret --path 'pulumi-fleet:gitRepos[0].downstreamResources[0].stringData.KEY' < value-file",
    );
    expect(notes.some((n) => n.startsWith('Bundle apps-web downstreamResources: {"kind":"ConfigMap","name":"settings"}: not mapped'))).to.equal(true);
    expect(notes.some((n) => n.startsWith("Bundle apps-web targets[prod].downstreamResources:") && n.includes("not mapped: per-target Secrets"))).to.equal(
      true,
    );
    expect(notes.join("\n")).to.not.include("not-ours");
    expect(result.text).to.include("# downstreamResources: Fleet copies Secret w/db");
    expect((configOf(result.text)["pulumi-fleet:gitRepos"] as Record<string, unknown>[])[0]).to.not.have.property("downstreamResources");
    expect(result.text).to.not.match(/c2VjcmV0LXRva2Vu|secret-token/);
  });

  describe("Fleet's GitRepoRestrictions and Policies (test/fleet-exports/restrictions.yaml)", () => {
    const RESTRICTED = "test/fleet-exports/restrictions.yaml";
    const restricted = () => importFleetExport(fs.readFileSync(path.join(ROOT, RESTRICTED), "utf8"), RESTRICTED);
    /** A workspace `w` of the given restriction objects and GitRepos (name -> spec), as an export. */
    const workspace = (restrictions: object[], gitRepos: Record<string, object>) =>
      YAML.stringify({
        apiVersion: "v1",
        kind: "List",
        items: [
          ...restrictions.map((r, i) => ({ apiVersion: "fleet.cattle.io/v1alpha1", metadata: { name: `r${i}`, namespace: "w" }, ...r })),
          ...Object.entries(gitRepos).map(([name, spec]) => ({
            apiVersion: "fleet.cattle.io/v1alpha1",
            kind: "GitRepo",
            metadata: { name, namespace: "w" },
            spec: { repo: "https://git.example.com/team/apps.git", ...spec },
          })),
        ],
      });
    const imported = (restrictions: object[], gitRepos: Record<string, object>) => {
      const result = importFleetExport(workspace(restrictions, gitRepos), "w.yaml");
      const repos = (configOf(result.text)["pulumi-fleet:gitRepos"] ?? []) as Record<string, unknown>[];
      return { ...result, repos: Object.fromEntries(repos.map((r) => [r.name, r])), noteTexts: result.notes.map((n) => `${n.object} ${n.field}: ${n.text}`) };
    };
    const grr = (fields: object) => ({ kind: "GitRepoRestriction", ...fields });
    const policy = (fields: object) => ({ kind: "Policy", ...fields });

    it("gives every GitRepo of the workspace the aggregated defaults and allow-lists, and says where each came from", () => {
      const result = restricted();
      const reach = {
        takeOwnership: true,
        allowTakeOwnership: true,
        allowOverrideTargets: true,
        allowedServiceAccounts: ["deployer", "ops"],
        allowedTargetNamespaces: ["apps", "web"],
      };
      expect(configOf(result.text)["pulumi-fleet:gitRepos"]).to.deep.equal([
        // No serviceAccount: a-first's default, which wins over b-later's (name order) and the Policy's (GitRepoRestriction first).
        { name: "apps", repo: "https://git.example.com/team-a/apps.git", targetNamespace: "apps", serviceAccount: "deployer", ...reach },
        { name: "mirror", repo: "https://mirror.example.com/apps.git", targetNamespace: "web", serviceAccount: "ops", ...reach },
      ]);
      expect(result.counts.gitRepos).to.equal(2);
      expect(result.text)
        .to.include("# serviceAccount: Fleet's defaultServiceAccount, from GitRepoRestriction team-a/a-first\n")
        .and.include("# allowedTargetNamespaces: from GitRepoRestriction team-a/a-first, GitRepoRestriction team-a/b-later\n")
        .and.include("# allowedServiceAccounts: from Policy team-a/p-accounts\n");
      // The default client secret names the Secret to copy credentials from.
      expect(result.notes.find((n) => n.object === "GitRepo team-a/apps" && n.field === "spec.clientSecretName")!.text).to.equal(
        'absent; Fleet uses defaultClientSecretName "team-a-git", from GitRepoRestriction team-a/a-first: not copied: set auth (username + token, or sshPrivateKey + knownHosts) as Pulumi secrets, from Secret team-a/team-a-git',
      );
    });

    it("leaves out each GitRepo Fleet refuses, naming the field, Fleet's reason and the restrictions, in the notes and the file header", () => {
      const result = restricted();
      expect(result.refused).to.deep.equal(["no-namespace", "wrong-account", "wrong-namespace", "wrong-repo", "wrong-secret"]);
      const refusals = result.notes.filter((n) => n.text.startsWith("Fleet refuses this GitRepo"));
      expect(refusals.map((n) => `${n.object} ${n.field}: ${n.text}`)).to.deep.equal([
        "GitRepo team-a/no-namespace spec.targetNamespace: Fleet refuses this GitRepo: absent, and allowedTargetNamespaces requires one (GitRepoRestriction team-a/a-first, GitRepoRestriction team-a/b-later); not imported",
        'GitRepo team-a/wrong-account spec.serviceAccount: Fleet refuses this GitRepo: "admin" is not in allowedServiceAccounts ["deployer","ops"] (GitRepoRestriction team-a/a-first, GitRepoRestriction team-a/b-later, Policy team-a/p-accounts); not imported',
        'GitRepo team-a/wrong-namespace spec.targetNamespace: Fleet refuses this GitRepo: "kube-system" is not in allowedTargetNamespaces ["apps","web","team-*"] (GitRepoRestriction team-a/a-first, GitRepoRestriction team-a/b-later); not imported',
        'GitRepo team-a/wrong-repo spec.repo: Fleet refuses this GitRepo: "https://github.com/someone/apps.git" matches none of allowedRepoPatterns ["git\\\\.example\\\\.com/team-a/","https://mirror\\\\.example\\\\.com/.*"] (GitRepoRestriction team-a/b-later, Policy team-a/p-accounts); not imported',
        'GitRepo team-a/wrong-secret spec.clientSecretName: Fleet refuses this GitRepo: "stolen" is not in allowedClientSecretNames ["team-a-git","mirror-git"] (GitRepoRestriction team-a/a-first, Policy team-a/p-accounts); not imported',
      ]);
      for (const n of refusals) expect(result.text).to.include(`# ${n.object}: ${n.field}: ${n.text}`);
    });

    it("names what has no stack setting: checked once, dropped, or not mapped; the Policy's helmOp default refuses the HelmOp", () => {
      const result = restricted();
      const onRestrictions = result.notes.filter((n) => /^(GitRepoRestriction|Policy|HelmOp) /.test(n.object));
      expect(onRestrictions.map((n) => `${n.object} ${n.field}`)).to.deep.equal([
        "GitRepoRestriction team-a/a-first metadata.labels",
        "GitRepoRestriction team-a/a-first allowedClientSecretNames",
        "GitRepoRestriction team-a/b-later allowedRepoPatterns",
        "GitRepoRestriction team-a/b-later allowedTargetNamespaces",
        "Policy team-a/p-accounts gitRepo.allowedClientSecretNames",
        "Policy team-a/p-accounts gitRepo.allowedRepoPatterns",
        "Policy team-a/q-require requireServiceAccount",
        "GitRepoRestriction team-a/a-first allowedServiceAccounts",
        "GitRepoRestriction team-a/b-later allowedServiceAccounts",
        "HelmOp team-a/chart spec.serviceAccount",
      ]);
      const text = (object: string, field: string) => onRestrictions.find((n) => n.object === object && n.field === field)!.text;
      expect(text("GitRepoRestriction team-a/b-later", "allowedTargetNamespaces")).to.match(/^\["team-\*"\]: not mapped: not namespace names/);
      expect(text("GitRepoRestriction team-a/b-later", "allowedRepoPatterns")).to.include("checked at import").and.include("not kept");
      expect(text("Policy team-a/q-require", "requireServiceAccount")).to.include("checked at import").and.include("not kept");
      // Unlike a GitRepo's, a HelmOp's default account is checked against the Policies' list (Fleet's AuthorizeAndAssignDefaults).
      expect(text("HelmOp team-a/chart", "spec.serviceAccount")).to.equal(
        'Fleet refuses this HelmOp: "helm-deployer" (the Policies\' helmOp.defaultServiceAccount) is not in the Policies\' allowedServiceAccounts ["deployer","ops"] (Policy team-a/p-accounts); not imported',
      );
      expect(result.refusedHelmOps).to.deep.equal(["chart"]);
      expect(result.counts.helmOps).to.equal(0);
      expect(text("GitRepoRestriction team-a/a-first", "allowedServiceAccounts")).to.include("Fleet checks every Bundle against the Policies' lists alone");
      for (const n of onRestrictions.filter((x) => x.field)) expect(result.text).to.include(`# ${n.object}: ${n.field}: ${n.text}`);
    });

    it("requireServiceAccount refuses a GitRepo left without one after defaulting; a default or its own satisfies it", () => {
      const require = policy({ requireServiceAccount: true });
      const without = imported([require], { bare: {}, own: { serviceAccount: "deployer" } });
      expect(without.refused).to.deep.equal(["bare"]);
      expect(without.noteTexts).to.include(
        "GitRepo w/bare spec.serviceAccount: Fleet refuses this GitRepo: absent, no default, and requireServiceAccount is set (Policy w/r0); not imported",
      );
      expect(without.repos.own.serviceAccount).to.equal("deployer");
      const defaulted = imported([require, policy({ gitRepo: { defaultServiceAccount: "policy-default" } })], { bare: {} });
      expect(defaulted.refused).to.deep.equal([]);
      expect(defaulted.repos.bare.serviceAccount).to.equal("policy-default");
    });

    it("allowedTargetNamespaceSelector: not mapped, and a GitRepo without targetNamespace is refused as Fleet does", () => {
      const selector = grr({ allowedTargetNamespaceSelector: { matchLabels: { team: "a" } } });
      const result = imported([selector], { bare: {}, placed: { targetNamespace: "apps" } });
      expect(result.refused).to.deep.equal(["bare"]);
      expect(result.noteTexts).to.include(
        "GitRepo w/bare spec.targetNamespace: Fleet refuses this GitRepo: absent, and allowedTargetNamespaceSelector requires one (GitRepoRestriction w/r0); not imported",
      );
      expect(result.noteTexts.find((t) => t.startsWith("GitRepoRestriction w/r0 allowedTargetNamespaceSelector: "))).to.include(
        "not mapped: it selects namespaces by their labels",
      );
      expect(result.repos.placed).to.not.have.property("allowedTargetNamespaces");
    });

    it("service accounts: the default is given unchecked (as Fleet's isAllowed); a Policy's list bounds the Bundles, so it is the one mapped", () => {
      const onlyRestriction = imported([grr({ defaultServiceAccount: "builder", allowedServiceAccounts: ["deployer"] })], { bare: {} });
      expect(onlyRestriction.refused).to.deep.equal([]);
      expect(onlyRestriction.repos.bare)
        .to.include({ serviceAccount: "builder" })
        .and.deep.include({ allowedServiceAccounts: ["deployer"] });
      expect(onlyRestriction.noteTexts.find((t) => t.startsWith("GitRepoRestriction w/r0 allowedServiceAccounts: "))).to.include(
        "also bounds the serviceAccount of fleet.yaml targetCustomizations",
      );
      // The GitRepo check passes (the default is not checked), Fleet's Bundle check against the Policy's list does not.
      const withPolicy = imported(
        [grr({ defaultServiceAccount: "builder", allowedServiceAccounts: ["builder"] }), policy({ allowedServiceAccounts: ["deployer"] })],
        { bare: {}, own: { serviceAccount: "deployer" } },
      );
      expect(withPolicy.refused).to.deep.equal(["bare"]);
      expect(withPolicy.noteTexts).to.include(
        'GitRepo w/bare spec.serviceAccount: Fleet refuses this GitRepo: "builder" is not in the Policies\' allowedServiceAccounts ["deployer"], so Fleet refuses each of its Bundles (Policy w/r1); not imported',
      );
      expect(withPolicy.repos.own.allowedServiceAccounts).to.deep.equal(["deployer"]);
    });

    it("repo patterns: a GitRepoRestriction's match anywhere, a Policy's the whole URL; (?i) is read; what JavaScript cannot read is named, not judged", () => {
      const repos = {
        sub: { repo: "https://evil.example.org/git.example.com/team/x.git" },
        exact: { repo: "https://git.example.com/team/apps.git" },
        upper: { repo: "HTTPS://GIT.EXAMPLE.COM/team/apps.git" },
      };
      const pattern = "https://git\\.example\\.com/team/";
      expect(imported([grr({ allowedRepoPatterns: ["git\\.example\\.com/team/"] })], repos).refused).to.deep.equal(["upper"]);
      expect(imported([policy({ gitRepo: { allowedRepoPatterns: [pattern] } })], repos).refused).to.deep.equal(["exact", "sub", "upper"]);
      expect(imported([policy({ gitRepo: { allowedRepoPatterns: [`(?i)${pattern}.*`] } })], repos).refused).to.deep.equal(["sub"]);
      // Verbatim, as Fleet's plain-string allow-lists: as a regular expression this one does not match itself.
      expect(
        imported([policy({ gitRepo: { allowedRepoPatterns: ["https://git.example.com/team/apps+x.git"] } })], {
          plus: { repo: "https://git.example.com/team/apps+x.git" },
        }).refused,
      ).to.deep.equal([]);
      // Go's \z (end of text) is no escape JavaScript knows: read leniently it would be a "z" and refuse the repo.
      const unreadable = imported([grr({ allowedRepoPatterns: ["team/apps\\.git\\z"] })], { exact: repos.exact });
      expect(unreadable.refused).to.deep.equal([]);
      expect(unreadable.noteTexts.find((t) => t.startsWith("GitRepo w/exact spec.repo: ")))
        .to.include("not checked against allowedRepoPatterns")
        .and.include("check by hand");
    });

    it("npm run import names the GitRepos it leaves out on stdout, besides the notes on stderr", () => {
      const stack = `import-restricted-${process.pid}`;
      try {
        const run = tsScript("scripts/import.ts", [RESTRICTED, "--stack", stack]);
        expect(run.status, run.stderr).to.equal(0);
        expect(run.stdout).to.include(
          "not imported: GitRepo team-a/no-namespace, GitRepo team-a/wrong-account, GitRepo team-a/wrong-namespace, GitRepo team-a/wrong-repo, GitRepo team-a/wrong-secret, HelmOp team-a/chart: Fleet refuses them",
        );
        expect(run.stderr.trim().split("\n")).to.have.length(restricted().notes.length);
      } finally {
        fs.rmSync(path.join(ROOT, "stacks", `Pulumi.${stack}.yaml`), { force: true });
      }
    });

    it("only the imported workspace's restrictions apply; a badly shaped one names itself", () => {
      const other = YAML.stringify({
        apiVersion: "fleet.cattle.io/v1alpha1",
        kind: "GitRepoRestriction",
        metadata: { name: "elsewhere", namespace: "other" },
        allowedTargetNamespaces: ["nowhere"],
      });
      const result = importFleetExport(`${workspace([], { apps: {} })}---\n${other}`, "w.yaml");
      expect(result.workspace).to.equal("w");
      expect(result.refused).to.deep.equal([]);
      expect(() => imported([grr({ allowedServiceAccounts: "deployer" })], { apps: {} })).to.throw(
        "w.yaml: GitRepoRestriction w/r0: allowedServiceAccounts must be a list of strings",
      );
    });
  });

  describe("round trip: npm run import, then npm run plan on what it wrote", () => {
    const stack = `import-test-${process.pid}`;
    const stackFile = path.join(ROOT, "stacks", `Pulumi.${stack}.yaml`);
    after(() => fs.rmSync(stackFile, { force: true }));

    it("the written stack plans unchanged: the GitRepos' bundles on the clusters Fleet's targets select", () => {
      // The export's repositories, made real: a branch main with two bundle paths, and a tag for the pinned one.
      const apps = new TestRepo({ "simple/cm.yaml": CONFIGMAP("simple"), "helm/cm.yaml": CONFIGMAP("helm") }, "main");
      const infra = new TestRepo({ "cm.yaml": CONFIGMAP("infra") });
      infra.git("tag", "v1.4.2");
      const input = path.join(apps.dir, "..", `export-${process.pid}.yaml`);
      fs.writeFileSync(
        input,
        exportText().replace("https://git.example.com/platform/apps.git", apps.url()).replace("git@git.example.com:platform/infra.git", infra.url()),
      );

      const imported = tsScript("scripts/import.ts", [input, "--workspace", "fleet-default", "--stack", stack]);
      expect(imported.status, imported.stderr).to.equal(0);
      expect(imported.stdout).to.include(
        `wrote stacks/Pulumi.${stack}.yaml: 3 clusters, 2 cluster groups, 2 GitRepos, 0 HelmOps from workspace fleet-default; 20 note(s)`,
      );
      expect(imported.stderr.trim().split("\n")).to.have.length(20);
      expect(imported.stderr).to.include(`${input}: GitRepo fleet-default/infra: spec.imageScanInterval: "5m": not mapped`);
      const again = tsScript("scripts/import.ts", [input, "--workspace", "fleet-default", "--stack", stack]);
      expect(again.status).to.equal(1);
      expect(again.stderr).to.include(`stacks/Pulumi.${stack}.yaml: exists already; nothing written (--force overwrites it)`);

      const plan = tsScript("scripts/plan.ts", ["--stack", stack]);
      expect(plan.status, plan.stdout + plan.stderr).to.equal(0);
      const lines = plan.stdout
        .split("\n")
        .filter((l) => /^\s+bundle /.test(l))
        .map((l) => l.trim());
      expect(lines).to.deep.equal([
        "bundle apps-simple (yaml, simple) -> c-m-dev1, c-m-prod1, c-m-prod2",
        "bundle apps-helm (yaml, helm) -> c-m-dev1, c-m-prod1, c-m-prod2",
        "bundle infra (yaml, .) -> no cluster",
      ]);
      expect(plan.stdout).to.match(/c-m-prod1\s+target=eu-prod namespace=apps/);
      expect(plan.stdout).to.match(/c-m-prod2\s+target=canary namespace=apps/);
    });
  });
});
