/**
 * A stack file's `gitRepos` entry, typed and validated: where the repository is and how it is reached,
 * which clusters it targets, and what the operator lets its content do (service accounts, namespaces,
 * chart URLs, takeOwnership). Content can narrow these, never widen them (core/desired/reach.ts).
 */
import * as path from "node:path";
import { Field } from "./reader";
import { keysOf, tableOf } from "./field-table";
import { GIT_REPO_FIELDS } from "./stack-fields";
import { TargetCriteria, readTargetCriteria } from "./target-criteria";
import { DownstreamSecret, readDownstreamResources } from "./downstream-resources";
import { PollingSettings, readPolling } from "./polling";
import { readName, readSecret } from "./fields";
import { dnsLabelProblem } from "../base/k8s-validation";

export interface GitAuth {
  sshPrivateKey?: string;
  knownHosts?: string;
  username?: string;
  token?: string;
}

export interface GitRepoConfig extends PollingSettings {
  name: string;
  repo: string;
  branch?: string;
  revision?: string;
  paths: string[];
  targets: TargetCriteria[];
  targetNamespace?: string;
  serviceAccount?: string;
  keepResources: boolean;
  deleteNamespace: boolean;
  paused: boolean;
  allowEmpty: boolean;
  /**
   * The operator's own takeOwnership for every bundle of this GitRepo: objects that exist on the clusters
   * (deployed by Fleet, say) are adopted instead of refused. For moving over; fleet.yaml cannot widen it.
   */
  takeOwnership?: boolean;
  auth?: GitAuth;
  caBundle?: string;
  insecureSkipTLSVerify: boolean;
  /** Credentials and transport for remote Helm charts: the keys of Fleet's helmSecretName secret. */
  helmSecret?: HelmSecret;
  /** Fleet's helmRepoURLRegex: helmSecret's credentials go only to chart URLs it matches (from the start). */
  helmRepoURLRegex?: string;
  /**
   * The chart URLs this GitRepo's content may make the runner pull from: Go regular expressions, each
   * matched against the whole normalized URL (scheme://host[:port]/path) of every request of a pull,
   * redirects and index.yaml's chart URLs included. Empty: no remote chart is pulled. The operator's
   * setting; content cannot widen it.
   */
  allowedChartURLs?: string[];
  /**
   * The service accounts this GitRepo's content may deploy as (fleet.yaml and targetCustomizations
   * `serviceAccount`), besides the stack's own `serviceAccount`, as Fleet's GitRepoRestriction and Policy
   * `allowedServiceAccounts`. Unset: content may name none when the stack names one (core/desired/reach.ts).
   */
  allowedServiceAccounts?: string[];
  /**
   * The namespaces this GitRepo's objects and lookups may be in: exact names or `*` patterns, as Fleet's
   * `allowedTargetNamespaces`. When set, cluster-scoped objects other than those Namespaces are refused.
   */
  allowedTargetNamespaces?: string[];
  /**
   * A chart's crds/ are also updated at every apply (Flux's `upgrade.crds: CreateReplace`); absent
   * (`Create`), as Helm and Fleet's agent: created when absent at the bundle's install, never updated.
   * The operator's: a CRD is every team's on its cluster.
   */
  chartCrds?: "CreateReplace";
  /** fleet.yaml `overrideTargets` may reach clusters outside `targets` (Fleet's default); off, it only narrows them. */
  allowOverrideTargets?: boolean;
  /** fleet.yaml `helm.takeOwnership` is honoured (never of what another GitRepo owns); off, such a bundle is refused. */
  allowTakeOwnership?: boolean;
  /** Secrets from the stack's encrypted config, created on every cluster the GitRepo targets before its bundles (core/desired/operator-secrets.ts). */
  downstreamResources?: DownstreamSecret[];
  /**
   * The age identities (an age key file's text) this GitRepo's SOPS-encrypted manifests are decrypted
   * with (core/bundles/sops.ts). A Pulumi secret; this GitRepo's alone, so another team's file does not open.
   */
  sopsAgeKey?: string;
  /** A HelmOp (stack file `helmOps`): its one bundle is generated from this, not read from git (core/source/helm-op.ts). */
  helmOp?: HelmOpSource;
}

/** Where a HelmOp's chart is and which versions it takes: what Fleet resolves again when it changes. */
export interface HelmOpChart {
  repo?: string;
  chart?: string;
  /** A semver constraint, an exact version, or empty (the newest). */
  version?: string;
}

export interface HelmOpSource {
  chart: HelmOpChart;
  /** The generated bundle's fleet.yaml, but for helm.version (the resolved version goes there). */
  fleetYaml: Record<string, unknown>;
  /**
   * Fleet's usesPolling: a pollingInterval, and a version that is not exact, of a chart that is not an
   * archive URL. Polled, each `up` (and the watcher) takes the newest matching version; not polled,
   * the version resolved first stays until repo, chart or version change.
   */
  polled: boolean;
  /** Where the entry is, for errors: the stack file and `helmOps[i]`. */
  origin: { file: string; field: string };
}

export interface HelmSecret {
  username?: string;
  password?: string;
  cacerts?: string;
  insecureSkipVerify: boolean;
  basicHTTP: boolean;
}

const REMOTE_URL = /^(https?|ssh|git):\/\/|^[\w.-]+@[\w.-]+:/;

/** A GitRepo entry as a stack file naming only `name` and `repo` reads (every other setting at its default), for commands and tools that build one. */
export function gitRepoEntry(name: string, repo: string, over: Partial<GitRepoConfig> = {}): GitRepoConfig {
  return {
    name,
    repo,
    paths: [],
    targets: [],
    keepResources: false,
    deleteNamespace: false,
    paused: false,
    allowEmpty: false,
    insecureSkipTLSVerify: false,
    ...over,
  };
}

export function readGitRepo(f: Field, baseDir: string): GitRepoConfig {
  f.object(keysOf(GIT_REPO_FIELDS));
  let repo = f.child("repo").string();
  if (!REMOTE_URL.test(repo) && !repo.startsWith("file://")) repo = path.resolve(baseDir, repo);
  if (/^https?:\/\/[^/]*@/.test(repo)) {
    f.child("repo").fail("must not embed credentials in the URL; use auth.username and auth.token (Pulumi secrets)");
  }
  const paths = f.child("paths").stringList();
  paths.forEach((p, i) => {
    if (p.split(/[\\/]/).includes(".."))
      f.child("paths")
        .index(i)
        .fail(`path ${JSON.stringify(p)} escapes the repository`);
  });
  const g: GitRepoConfig = {
    name: readName(f.child("name")),
    repo,
    paths,
    targets: f
      .child("targets")
      .items()
      .map((t) => readTargetCriteria(t)),
    keepResources: f.child("keepResources").bool(),
    deleteNamespace: f.child("deleteNamespace").bool(),
    paused: f.child("paused").bool(),
    allowEmpty: f.child("allowEmpty").bool(),
    insecureSkipTLSVerify: f.child("insecureSkipTLSVerify").bool(),
    ...readPolling(f),
  };
  Object.assign(g, readReachFields(f));
  if (f.child("allowOverrideTargets").bool()) g.allowOverrideTargets = true;
  const targetNamespace = f.child("targetNamespace").optString();
  if (targetNamespace) {
    const problem = dnsLabelProblem(targetNamespace);
    if (problem) f.child("targetNamespace").fail(`invalid namespace ${JSON.stringify(targetNamespace)}: ${problem}`);
    g.targetNamespace = targetNamespace;
  }
  const serviceAccount = f.child("serviceAccount").optString();
  if (serviceAccount) g.serviceAccount = serviceAccount;
  if (g.targetNamespace && g.allowedTargetNamespaces && !namespaceAllowed(g.targetNamespace, g.allowedTargetNamespaces)) {
    f.child("targetNamespace").fail(`${JSON.stringify(g.targetNamespace)} is not in allowedTargetNamespaces`);
  }
  const branch = f.child("branch").optString();
  const revision = f.child("revision").optString();
  if (branch && revision) f.child("revision").fail("set either branch or revision, not both");
  if (branch) g.branch = branch;
  if (revision) g.revision = revision;
  const caBundle = f.child("caBundle").optString();
  if (caBundle) g.caBundle = caBundle;
  const auth = f.child("auth");
  if (auth.present) {
    auth.object(keysOf(tableOf(GIT_REPO_FIELDS.auth)));
    const a: GitAuth = {};
    const key = readSecret(auth.child("sshPrivateKey"));
    if (key) a.sshPrivateKey = key;
    const knownHosts = auth.child("knownHosts").optString();
    if (knownHosts) a.knownHosts = knownHosts;
    const username = auth.child("username").optString();
    if (username) a.username = username;
    const token = readSecret(auth.child("token"));
    if (token) a.token = token;
    if (a.sshPrivateKey && !a.knownHosts) auth.child("knownHosts").fail("is required with sshPrivateKey (host keys are always verified)");
    g.auth = a;
  }
  const helmSecret = readHelmSecret(f.child("helmSecret"));
  if (helmSecret) g.helmSecret = helmSecret;
  const downstream = readDownstreamResources(f.child("downstreamResources"), g, namespaceAllowed);
  if (downstream.length) g.downstreamResources = downstream;
  const ageKey = readSecret(f.child("sopsAgeKey"));
  if (ageKey !== undefined) {
    // The message never quotes the value: it is the key.
    if (!isAgeIdentityFile(ageKey))
      f.child("sopsAgeKey").fail("is not an age key file: one or more AGE-SECRET-KEY-1... lines (age-keygen's output; # comments allowed)");
    g.sopsAgeKey = ageKey;
  }
  return g;
}

/** Fleet's helmSecretName keys, as gitRepos[] and helmOps[] give them. */
export function readHelmSecret(helmSecret: Field): HelmSecret | undefined {
  if (!helmSecret.present) return undefined;
  helmSecret.object(keysOf(tableOf(GIT_REPO_FIELDS.helmSecret)));
  const h: HelmSecret = { insecureSkipVerify: helmSecret.child("insecureSkipVerify").bool(), basicHTTP: helmSecret.child("basicHTTP").bool() };
  const username = helmSecret.child("username").optString();
  const password = readSecret(helmSecret.child("password"));
  if (username) h.username = username;
  if (password) h.password = password;
  // Fleet refuses a secret with one of the two.
  if (helmSecret.child("username").present !== helmSecret.child("password").present) {
    helmSecret.fail("username and password must be set together");
  }
  const cacerts = helmSecret.child("cacerts").optString();
  if (cacerts) h.cacerts = cacerts;
  return h;
}

/** What the operator lets a source's content reach and be (gitRepos[] and helmOps[] alike): content can only narrow it. */
export type ReachFields = Pick<
  GitRepoConfig,
  "takeOwnership" | "chartCrds" | "allowTakeOwnership" | "allowedServiceAccounts" | "allowedTargetNamespaces" | "helmRepoURLRegex" | "allowedChartURLs"
>;

export function readReachFields(f: Field): ReachFields {
  const g: ReachFields = {};
  if (f.child("takeOwnership").bool()) g.takeOwnership = true;
  if (f.child("chartCrds").oneOf(["Create", "CreateReplace"] as const, "Create") === "CreateReplace") g.chartCrds = "CreateReplace";
  if (f.child("allowTakeOwnership").bool()) g.allowTakeOwnership = true;
  const accounts = f.child("allowedServiceAccounts");
  if (accounts.present) g.allowedServiceAccounts = accounts.stringList();
  const namespaces = f.child("allowedTargetNamespaces");
  if (namespaces.present) {
    const allowed = namespaces.stringList();
    namespaces.items().forEach((item, i) => {
      const problem = dnsLabelProblem(allowed[i].replace(/\*/g, "x"));
      if (problem) item.fail(`invalid namespace pattern ${JSON.stringify(allowed[i])}: ${problem} (a name, or a name with * for any characters)`);
    });
    g.allowedTargetNamespaces = allowed;
  }
  // Compiled by fleet-render with Go's regexp (RE2), as Fleet does, when a chart is pulled.
  const regex = f.child("helmRepoURLRegex").optString();
  if (regex) g.helmRepoURLRegex = regex;
  const allowedCharts = f.child("allowedChartURLs");
  if (allowedCharts.present) g.allowedChartURLs = allowedCharts.stringList();
  return g;
}

/** An age identity file as age reads one: AGE-SECRET-KEY-1 identities (Bech32), one per line, blank and # lines aside. */
function isAgeIdentityFile(text: string): boolean {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  return lines.length > 0 && lines.every((l) => /^AGE-SECRET-KEY-1[023456789ACDEFGHJKLMNPQRSTUVWXYZ]{58}$/.test(l));
}

/** Whether a namespace is one of `allowed`: exact names, or patterns where `*` stands for any characters (never a regular expression of content). */
export function namespaceAllowed(namespace: string, allowed: readonly string[]): boolean {
  return allowed.some((p) => {
    const parts = p.split("*");
    if (parts.length === 1) return p === namespace;
    if (!namespace.startsWith(parts[0]) || !namespace.endsWith(parts[parts.length - 1]) || namespace.length < parts[0].length + parts[parts.length - 1].length)
      return false;
    let at = parts[0].length;
    const end = namespace.length - parts[parts.length - 1].length;
    for (const mid of parts.slice(1, -1)) {
      const found = namespace.indexOf(mid, at);
      if (found < 0 || found + mid.length > end) return false;
      at = found + mid.length;
    }
    return true;
  });
}
