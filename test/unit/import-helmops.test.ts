/**
 * The importer (core/import/fleet-export.ts, helm-ops.ts) on Fleet HelmOps (Fleet v0.16.0 helmop_types.go,
 * helmops/reconciler): each becomes a `helmOps` entry of the stack file that the stack's reader takes
 * (core/config/helm-op.ts); what has no place there is named; a HelmOp Fleet refuses (its `validate`, the
 * workspace's Policies) is left out with Fleet's reason; no secret is copied.
 */
import { expect } from "chai";
import * as YAML from "yaml";
import { importFleetExport, ImportResult } from "../../core/import/fleet-export";
import { parseStackConfig } from "../../core/config/stack";

type Entry = Record<string, unknown>;
const fleetObject = (kind: string, name: string, fields: object, namespace = "w") => ({
  apiVersion: "fleet.cattle.io/v1alpha1",
  kind,
  metadata: { name, namespace },
  ...fields,
});
const helmOp = (name: string, spec: object, namespace = "w") => fleetObject("HelmOp", name, { spec }, namespace);
const policy = (name: string, fields: object) => fleetObject("Policy", name, fields);
const exportOf = (...items: object[]) => YAML.stringify({ apiVersion: "v1", kind: "List", items });
const CHART = { repo: "https://charts.example.com", chart: "podinfo" };

function imported(
  items: object[],
  workspace?: string,
): ImportResult & { config: Record<string, unknown>; entries: Record<string, Entry>; noteTexts: string[] } {
  const result = importFleetExport(exportOf(...items), "w.yaml", workspace ? { workspace } : {});
  const config = (YAML.parse(result.text) as { config: Record<string, unknown> }).config;
  const entries = ((config["pulumi-fleet:helmOps"] ?? []) as Entry[]).map((e) => [e.name as string, e]);
  return { ...result, config, entries: Object.fromEntries(entries), noteTexts: result.notes.map((n) => `${n.object} ${n.field}: ${n.text}`) };
}

describe("importing Fleet's HelmOps (npm run import)", () => {
  it("maps every spec field to the helmOps key that carries it, keeps unnamed targets unnamed, derives allowedChartURLs", () => {
    const full = helmOp("podinfo", {
      helm: {
        ...CHART,
        repo: "https://Charts.Example.com:443/stable",
        version: "6.x",
        releaseName: "podinfo",
        values: { replicaCount: 2 },
        templateValues: { host: "${ .ClusterName }.example.com" },
        valuesFrom: [{ configMapKeyRef: { name: "vals", key: "values.yaml" } }],
        timeoutSeconds: 300,
        force: false,
        atomic: true,
        takeOwnership: true,
        waitForJobs: true,
        disableDependencyUpdate: true,
      },
      defaultNamespace: "podinfo",
      namespace: "podinfo",
      serviceAccount: "deployer",
      namespaceLabels: { team: "web" },
      namespaceAnnotations: { owner: "web" },
      keepResources: true,
      deleteNamespace: true,
      deleteCRDResources: true,
      forceSyncGeneration: 2,
      diff: { comparePatches: [{ apiVersion: "apps/v1", kind: "Deployment", name: "podinfo", jsonPointers: ["/spec/replicas"] }] },
      correctDrift: { enabled: true },
      ignore: { conditions: [{ type: "Progressing" }] },
      paused: true,
      rolloutStrategy: { maxUnavailable: "10%" },
      dependsOn: [{ name: "cert-manager" }],
      targetCustomizationMode: "FirstMatch",
      targets: [
        { clusterSelector: { matchLabels: { env: "prod" } }, helm: { values: { replicaCount: 3 } }, serviceAccount: "prod-deployer" },
        { name: "dev", clusterGroup: "dev", doNotDeploy: true },
      ],
      labels: { app: "podinfo" },
      pollingInterval: "5m0s",
      insecureSkipTLSVerify: true,
    });
    const result = imported([{ ...full, status: { version: "6.5.0", conditions: [{ type: "Ready", status: "True" }] } }]);
    expect(result.counts).to.deep.equal({ clusters: 0, clusterGroups: 0, gitRepos: 0, helmOps: 1 });
    expect(result.refusedHelmOps).to.deep.equal([]);
    const entry = result.entries.podinfo;
    expect(entry).to.deep.equal({
      name: "podinfo",
      helm: {
        repo: "https://Charts.Example.com:443/stable",
        chart: "podinfo",
        version: "6.x",
        releaseName: "podinfo",
        values: { replicaCount: 2 },
        templateValues: { host: "${ .ClusterName }.example.com" },
        valuesFrom: [{ configMapKeyRef: { name: "vals", key: "values.yaml" } }],
        timeoutSeconds: 300,
        takeOwnership: true,
        waitForJobs: true,
        atomic: true,
        disableDependencyUpdate: true,
      },
      // Kept as given: Fleet names the first target000, and so does the stack's reader.
      targets: [
        { clusterSelector: { matchLabels: { env: "prod" } }, helm: { values: { replicaCount: 3 } }, serviceAccount: "prod-deployer" },
        { name: "dev", clusterGroup: "dev", doNotDeploy: true },
      ],
      defaultNamespace: "podinfo",
      namespace: "podinfo",
      namespaceLabels: { team: "web" },
      namespaceAnnotations: { owner: "web" },
      serviceAccount: "deployer",
      keepResources: true,
      deleteNamespace: true,
      deleteCRDResources: true,
      forceSyncGeneration: 2,
      diff: { comparePatches: [{ apiVersion: "apps/v1", kind: "Deployment", name: "podinfo", jsonPointers: ["/spec/replicas"] }] },
      correctDrift: { enabled: true },
      ignore: { conditions: [{ type: "Progressing" }] },
      labels: { app: "podinfo" },
      paused: true,
      rolloutStrategy: { maxUnavailable: "10%" },
      dependsOn: [{ name: "cert-manager" }],
      pollingInterval: "5m0s",
      insecureSkipTLSVerify: true,
      // The repository, as the puller normalizes its requests (lower-case host, no default port), with a trailing slash.
      allowedChartURLs: ["https://charts\\.example\\.com/stable/.*"],
      // A target deploys as its own account in Fleet; the stack refuses content an account it is not given.
      allowedServiceAccounts: ["prod-deployer"],
      allowTakeOwnership: true,
      takeOwnership: true,
    });
    // FirstMatch is the CRD's default and the stack's only mode: no note. A plain dependsOn name is one (here it is the
    // source's own bundle), and the version Fleet deploys is one when the constraint could resolve to another.
    expect(result.notes.map((n) => `${n.object} ${n.field}`)).to.deep.equal([
      "HelmOp w/podinfo spec.dependsOn[0]",
      "HelmOp w/podinfo allowedChartURLs",
      "HelmOp w/podinfo status.version",
    ]);
    expect(result.notes[0].text).to.include("fleet.cattle.io/repo-name");
    expect(result.notes[1].text).to.include("derived from spec.helm.repo").and.include("review it");
    expect(result.notes[2].text).to.include('set helm.version: "6.5.0" first');
    expect(result.text).to.include("# allowedChartURLs: ").and.include("# allowedServiceAccounts: the targets' own serviceAccounts");
    expect(result.text).to.include("# Every HelmOp has allowedChartURLs derived from its chart's URL");
    // The file is what the stack's reader takes: the HelmOp joins the sources, its spec its bundle's fleet.yaml.
    const stack = parseStackConfig(Object.fromEntries(Object.entries(result.config).map(([k, v]) => [k.replace(/^pulumi-fleet:/, ""), v])), "w.yaml", "/");
    const source = stack.gitRepos.find((g) => g.name === "podinfo")!;
    expect(source.helmOp!.chart).to.deep.equal({ repo: "https://Charts.Example.com:443/stable", chart: "podinfo", version: "6.x" });
    expect(source.helmOp!.polled).to.equal(true);
    expect(source.helmSecret).to.deep.include({ insecureSkipVerify: true });
    expect(source.allowedChartURLs).to.deep.equal(["https://charts\\.example\\.com/stable/.*"]);
  });

  it("names what the stack has no place for, beside the entry and to the caller; the output is ordered and commented", () => {
    const result = imported([
      helmOp("zeta", {
        helm: { ...CHART, valuesFiles: ["values-prod.yaml"], fromTheFuture: 1 },
        targetCustomizationMode: "AllMatches",
        downstreamResources: [{ kind: "Secret", name: "db" }],
        kustomize: { dir: "k" },
        targets: [{ name: "a", clusterName: "c1", yaml: { overlays: ["x"] }, helm: { valuesFiles: ["v.yaml"] } }],
        pollingInterval: "100ms",
        newField: true,
      }),
      { ...helmOp("alpha", { helm: CHART, pollingInterval: "0" }), metadata: { name: "alpha", namespace: "w", labels: { team: "a" }, uid: "x" } },
      fleetObject("GitRepo", "apps", { spec: { repo: "https://git.example.com/apps.git" } }),
    ]);
    expect(Object.keys(result.config)).to.deep.equal(["pulumi-fleet:agent", "pulumi-fleet:gitRepos", "pulumi-fleet:helmOps"]);
    expect((result.config["pulumi-fleet:helmOps"] as Entry[]).map((e) => e.name)).to.deep.equal(["alpha", "zeta"]);
    // "0": never polled, Fleet's default for a HelmOp, as absent.
    expect(result.entries.alpha).to.not.have.property("pollingInterval");
    expect(result.entries.zeta).to.not.have.property("pollingInterval");
    expect(result.entries.zeta.helm).to.deep.equal(CHART);
    expect(result.entries.zeta.targets).to.deep.equal([{ name: "a", clusterName: "c1" }]);
    const mine = result.notes.filter((n) => n.object.startsWith("HelmOp "));
    expect(mine.map((n) => `${n.object} ${n.field}`)).to.deep.equal([
      "HelmOp w/alpha metadata.labels",
      "HelmOp w/alpha allowedChartURLs",
      "HelmOp w/zeta spec.helm.valuesFiles",
      "HelmOp w/zeta spec.helm.fromTheFuture",
      "HelmOp w/zeta spec.targets[0].helm.valuesFiles",
      "HelmOp w/zeta spec.targets[0].yaml",
      "HelmOp w/zeta spec.targetCustomizationMode",
      "HelmOp w/zeta spec.pollingInterval",
      "HelmOp w/zeta allowedChartURLs",
      "HelmOp w/zeta spec.kustomize",
      "HelmOp w/zeta spec.downstreamResources",
      "HelmOp w/zeta spec.newField",
    ]);
    const text = (object: string, field: string) => mine.find((n) => n.object === object && n.field === field)!.text;
    expect(text("HelmOp w/zeta", "spec.helm.valuesFiles")).to.equal(
      '["values-prod.yaml"]: not mapped: a HelmOp has no files to read values from (Fleet reads none); put the values in helm.values',
    );
    expect(text("HelmOp w/zeta", "spec.targetCustomizationMode")).to.include("not mapped").and.include("FirstMatch");
    expect(text("HelmOp w/zeta", "spec.pollingInterval")).to.equal('"100ms": not mapped: the stack polls at most once a second');
    expect(text("HelmOp w/zeta", "spec.newField")).to.equal("true: not mapped: not known to this importer");
    // Each note is a comment right above its entry, in the order noted.
    const zeta = result.text.indexOf("- name: zeta");
    const comments = result.text.slice(result.text.indexOf("- name: alpha"), zeta);
    let at = 0;
    for (const n of mine.filter((x) => x.object === "HelmOp w/zeta")) {
      const i = comments.indexOf(`# ${n.field}: ${n.text}\n`, at);
      expect(i, n.field).to.be.greaterThan(-1);
      at = i;
    }
    expect(result.text).to.include("Fleet workspace w: 0 clusters, 0 cluster groups, 1 GitRepos, 2 HelmOps.");
  });

  it("helmSecretName: a note naming the Secret to set helmSecret from, never its contents; helmRepoURLRegex sends them to the chart's host", () => {
    const result = imported([
      helmOp("private", { helm: { repo: "oci://GHCR.io/team/charts/podinfo/", version: "6.5.0" }, helmSecretName: "ghcr-creds" }),
      { apiVersion: "v1", kind: "Secret", metadata: { name: "ghcr-creds", namespace: "w" }, data: { password: "c2VjcmV0LXRva2Vu" } },
    ]);
    const entry = result.entries.private;
    expect(entry).to.not.have.property("helmSecret");
    // An oci:// repository's requests are the registry's https://HOST/v2/PATH/...
    expect(entry.allowedChartURLs).to.deep.equal(["https://ghcr\\.io/v2/team/charts/podinfo/.*"]);
    expect(entry.helmRepoURLRegex).to.equal("https://ghcr\\.io/");
    expect(result.noteTexts).to.include(
      'HelmOp w/private spec.helmSecretName: "ghcr-creds": not copied: set helmSecret (username + password as Pulumi secrets, cacerts, insecureSkipVerify, basicHTTP) from Secret w/ghcr-creds; helmRepoURLRegex "https://ghcr\\\\.io/" sends them to the chart\'s host alone, as Helm sends Fleet\'s',
    );
    expect(result.noteTexts.find((t) => t.startsWith("HelmOp w/private allowedChartURLs"))).to.include("the registry's token endpoint");
    expect(result.text)
      .to.include("# spec.helmSecretName: ")
      .and.not.match(/c2VjcmV0LXRva2Vu|secret-token/);
    // A URL with credentials in it is neither copied nor imported.
    const embedded = imported([helmOp("creds", { helm: { chart: "podinfo", repo: "https://user:s3cr3t@charts.example.com" } }), helmOp("ok", { helm: CHART })]);
    expect(embedded.refusedHelmOps).to.deep.equal(["creds"]);
    expect(embedded.text).to.not.include("s3cr3t");
    expect(embedded.noteTexts.join("\n")).to.not.include("s3cr3t");
    expect(embedded.noteTexts.find((t) => t.startsWith("HelmOp w/creds spec.helm.repo: ")))
      .to.include("user name or password")
      .and.include("not imported");
  });

  it("a chart archive URL is allowed exactly; each target's own chart location is allowed too", () => {
    const result = imported([
      helmOp("archive", { helm: { chart: "https://github.com/org/repo/releases/download/v1/chart-1.0.0.tgz" } }),
      helmOp("multi", { helm: CHART, targets: [{ name: "mirror", clusterName: "c1", helm: { repo: "https://mirror.example.com/charts/" } }] }),
    ]);
    expect(result.entries.archive.allowedChartURLs).to.deep.equal(["https://github\\.com/org/repo/releases/download/v1/chart-1\\.0\\.0\\.tgz"]);
    expect(result.entries.multi.allowedChartURLs).to.deep.equal(["https://charts\\.example\\.com/.*", "https://mirror\\.example\\.com/charts/.*"]);
  });

  it("leaves out a HelmOp Fleet's validation refuses, with Fleet's reason in the notes and the file header", () => {
    const result = imported([
      helmOp("tgz-repo", { helm: { chart: "https://x.example.com/c-1.0.0.TGZ", repo: "https://x.example.com" } }),
      helmOp("tgz-version", { helm: { chart: "https://x.example.com/c-1.0.0.tgz", version: "1.0.0" } }),
      helmOp("oci-chart", { helm: { repo: "oci://r.example.com/c", chart: "c" } }),
      helmOp("no-chart", { helm: { repo: "https://x.example.com" } }),
      helmOp("no-repo", { helm: { chart: "podinfo" } }),
      helmOp("no-helm", {}),
      helmOp("fine", { helm: CHART }),
    ]);
    expect(result.refusedHelmOps).to.deep.equal(["no-chart", "no-helm", "no-repo", "oci-chart", "tgz-repo", "tgz-version"]);
    expect(Object.keys(result.entries)).to.deep.equal(["fine"]);
    const refusals = result.noteTexts.filter((t) => t.includes("Fleet refuses this HelmOp"));
    expect(refusals).to.deep.equal([
      "HelmOp w/no-chart spec.helm: Fleet refuses this HelmOp: helm options invalid: non-OCI repository with an empty chart field; not imported",
      "HelmOp w/no-helm spec.helm: Fleet refuses this HelmOp: helm options are empty in the HelmOp's spec; not imported",
      "HelmOp w/no-repo spec.helm: Fleet refuses this HelmOp: helm options invalid: non-tarball chart with an empty repo field; not imported",
      "HelmOp w/oci-chart spec.helm: Fleet refuses this HelmOp: helm options invalid: OCI repository with a non-empty chart field; not imported",
      "HelmOp w/tgz-repo spec.helm: Fleet refuses this HelmOp: helm options invalid: tarball chart with a non-empty repo field; not imported",
      "HelmOp w/tgz-version spec.helm: Fleet refuses this HelmOp: helm options invalid: tarball chart with a non-empty version field; not imported",
    ]);
    for (const n of result.notes.filter((x) => x.text.includes("Fleet refuses"))) expect(result.text).to.include(`# ${n.object}: ${n.field}: ${n.text}\n`);
    expect(result.text.indexOf("# HelmOp w/no-chart")).to.be.lessThan(result.text.indexOf("config:"));
  });

  it("leaves out what the file cannot say: a HelmOp named as a GitRepo, or one with targetRestrictions", () => {
    const result = imported([
      fleetObject("GitRepo", "apps", { spec: { repo: "https://git.example.com/apps.git" } }),
      helmOp("apps", { helm: CHART }),
      helmOp("restricted", { helm: CHART, targetRestrictions: [{ clusterGroup: "prod" }] }),
    ]);
    expect(result.refusedHelmOps).to.deep.equal(["apps", "restricted"]);
    expect(result.counts).to.include({ gitRepos: 1, helmOps: 0 });
    expect(result.noteTexts.find((t) => t.startsWith("HelmOp w/apps metadata.name: "))).to.include("unique across gitRepos and helmOps");
    expect(result.noteTexts.find((t) => t.startsWith("HelmOp w/restricted spec.targetRestrictions: "))).to.include("not imported");
  });

  it("imports one workspace: HelmOps of others are left out; HelmOps alone make a workspace", () => {
    const onlyHelm = imported([helmOp("here", { helm: CHART }), fleetObject("Cluster", "c1", { spec: {} }), helmOp("there", { helm: CHART }, "other")], "w");
    expect(onlyHelm.workspace).to.equal("w");
    expect(Object.keys(onlyHelm.entries)).to.deep.equal(["here"]);
    expect(onlyHelm.noteTexts.join("\n")).to.not.include("there");
    expect(() => importFleetExport(exportOf(helmOp("here", { helm: CHART }), helmOp("there", { helm: CHART }, "other")), "w.yaml")).to.throw(
      "holds several Fleet workspaces (other, w)",
    );
    expect(imported([helmOp("alone", { helm: CHART })]).workspace).to.equal("w");
    // A name the stack cannot carry is refused as a GitRepo's is: renaming would redeploy.
    expect(() => imported([helmOp("Web.App", { helm: CHART })])).to.throw("HelmOp w/Web.App: its name is not usable as a stack name");
  });

  describe("the workspace's Policies (helmops/reconciler/restrictions.go, then Fleet's Bundle check)", () => {
    it("gives the Policies' helmOp defaults and allowedServiceAccounts, saying where each came from; GitRepoRestrictions do not apply", () => {
      const result = imported([
        policy("a", { allowedServiceAccounts: ["helm-deployer", "ops"], helmOp: { defaultServiceAccount: "helm-deployer", defaultHelmSecretName: "charts" } }),
        policy("b", { helmOp: { defaultServiceAccount: "loses", allowedHelmSecretNames: ["charts"] } }),
        fleetObject("GitRepoRestriction", "r", { allowedServiceAccounts: ["nobody"], allowedTargetNamespaces: ["nowhere"] }),
        helmOp("bare", { helm: CHART }),
        helmOp("own", { helm: CHART, serviceAccount: "ops", helmSecretName: "charts" }),
      ]);
      expect(result.refusedHelmOps).to.deep.equal([]);
      expect(result.entries.bare).to.include({ serviceAccount: "helm-deployer", helmRepoURLRegex: "https://charts\\.example\\.com/" });
      expect(result.entries.bare.allowedServiceAccounts).to.deep.equal(["helm-deployer", "ops"]);
      expect(result.entries.bare).to.not.have.property("allowedTargetNamespaces");
      expect(result.entries.own).to.include({ serviceAccount: "ops" });
      expect(result.text)
        .to.include("# serviceAccount: the Policies' helmOp.defaultServiceAccount, from Policy w/a\n")
        .and.include("# allowedServiceAccounts: from Policy w/a\n");
      expect(result.noteTexts).to.include(
        'HelmOp w/bare spec.helmSecretName: absent; Fleet uses the Policies\' helmOp.defaultHelmSecretName "charts", from Policy w/a: not copied: set helmSecret (username + password as Pulumi secrets, cacerts, insecureSkipVerify, basicHTTP) from Secret w/charts; helmRepoURLRegex "https://charts\\\\.example\\\\.com/" sends them to the chart\'s host alone, as Helm sends Fleet\'s',
      );
      expect(result.noteTexts.find((t) => t.startsWith("Policy w/b helmOp.allowedHelmSecretNames: ")))
        .to.include("checked at import")
        .and.include("not kept");
    });

    it("leaves out each HelmOp Fleet refuses, with every reason: accounts (its default too), secret names, repo and chart patterns, targets' accounts", () => {
      const result = imported([
        policy("p", {
          requireServiceAccount: true,
          allowedServiceAccounts: ["deployer"],
          helmOp: {
            defaultHelmSecretName: "stolen",
            allowedHelmSecretNames: ["charts"],
            allowedHelmRepoPatterns: ["https://charts\\.example\\.com(/.*)?", "oci://registry\\.example\\.com/.*"],
            allowedChartPatterns: ["podinfo|nginx"],
          },
        }),
        helmOp("no-account", { helm: CHART, helmSecretName: "charts" }),
        helmOp("wrong-account", { helm: CHART, serviceAccount: "admin", helmSecretName: "charts" }),
        helmOp("default-secret", { helm: CHART, serviceAccount: "deployer" }),
        helmOp("wrong-repo", {
          helm: { repo: "https://evil.example.org/charts.example.com", chart: "podinfo" },
          serviceAccount: "deployer",
          helmSecretName: "charts",
        }),
        helmOp("wrong-chart", { helm: { ...CHART, chart: "redis" }, serviceAccount: "deployer", helmSecretName: "charts" }),
        helmOp("wrong-target", { helm: CHART, serviceAccount: "deployer", helmSecretName: "charts", targets: [{ clusterName: "c1", serviceAccount: "root" }] }),
        // An OCI reference has no chart: the chart patterns pass it, as Fleet's IsAllowedByRegex passes an empty value.
        helmOp("oci", { helm: { repo: "oci://registry.example.com/charts/podinfo" }, serviceAccount: "deployer", helmSecretName: "charts" }),
        helmOp("fine", { helm: CHART, serviceAccount: "deployer", helmSecretName: "charts" }),
      ]);
      expect(result.refusedHelmOps).to.deep.equal(["default-secret", "no-account", "wrong-account", "wrong-chart", "wrong-repo", "wrong-target"]);
      expect(Object.keys(result.entries)).to.deep.equal(["fine", "oci"]);
      expect(result.noteTexts.filter((t) => t.includes("Fleet refuses this HelmOp"))).to.deep.equal([
        'HelmOp w/default-secret spec.helmSecretName: Fleet refuses this HelmOp: "stolen" (the Policies\' helmOp.defaultHelmSecretName) is not in allowedHelmSecretNames ["charts"] (Policy w/p); not imported',
        "HelmOp w/no-account spec.serviceAccount: Fleet refuses this HelmOp: absent, no helmOp.defaultServiceAccount, and requireServiceAccount is set (Policy w/p); not imported",
        'HelmOp w/wrong-account spec.serviceAccount: Fleet refuses this HelmOp: "admin" is not in the Policies\' allowedServiceAccounts ["deployer"] (Policy w/p); not imported',
        'HelmOp w/wrong-chart spec.helm.chart: Fleet refuses this HelmOp: "redis" matches none of allowedChartPatterns ["podinfo|nginx"] (Policy w/p); not imported',
        'HelmOp w/wrong-repo spec.helm.repo: Fleet refuses this HelmOp: "https://evil.example.org/charts.example.com" matches none of allowedHelmRepoPatterns ["https://charts\\\\.example\\\\.com(/.*)?","oci://registry\\\\.example\\\\.com/.*"] (Policy w/p); not imported',
        'HelmOp w/wrong-target spec.targets[0].serviceAccount: Fleet refuses this HelmOp: "root" of target target000 is not in the Policies\' allowedServiceAccounts ["deployer"], so Fleet refuses the HelmOp\'s Bundle (Policy w/p); not imported',
      ]);
      expect(result.text).to.include("# HelmOp w/wrong-target: spec.targets[0].serviceAccount: Fleet refuses this HelmOp");
      const notes = result.noteTexts.filter((t) => t.startsWith("Policy w/p "));
      expect(notes.map((t) => t.split(":")[0])).to.deep.equal([
        "Policy w/p requireServiceAccount",
        "Policy w/p helmOp.allowedHelmSecretNames",
        "Policy w/p helmOp.allowedHelmRepoPatterns",
        "Policy w/p helmOp.allowedChartPatterns",
      ]);
      expect(notes[0]).to.include("a GitRepo or HelmOp it refuses is not imported");
    });

    it("repo patterns as Fleet reads them: anchored, verbatim allowed, (?i) read; a pattern JavaScript cannot read is named, not judged", () => {
      const repos = (patterns: string[]) =>
        imported([
          policy("p", { helmOp: { allowedHelmRepoPatterns: patterns } }),
          helmOp("exact", { helm: CHART }),
          helmOp("upper", { helm: { ...CHART, repo: "HTTPS://CHARTS.EXAMPLE.COM" } }),
          helmOp("sub", { helm: { ...CHART, repo: "https://charts.example.com.evil.org" } }),
          helmOp("plus", { helm: { ...CHART, repo: "https://charts.example.com/a+b" } }),
        ]);
      expect(repos(["https://charts\\.example\\.com"]).refusedHelmOps).to.deep.equal(["plus", "sub", "upper"]);
      expect(repos(["(?i)https://charts\\.example\\.com"]).refusedHelmOps).to.deep.equal(["plus", "sub"]);
      // Verbatim, as Fleet's plain-string allow-lists: as a regular expression this one does not match itself.
      expect(repos(["https://charts.example.com/a+b"]).refusedHelmOps).to.deep.equal(["exact", "sub", "upper"]);
      const unreadable = repos(["https://charts\\.example\\.com\\z"]);
      expect(unreadable.refusedHelmOps).to.deep.equal([]);
      expect(unreadable.noteTexts.find((t) => t.startsWith("HelmOp w/exact spec.helm.repo: ")))
        .to.include("not checked against allowedHelmRepoPatterns")
        .and.include("check by hand");
    });
  });
});
