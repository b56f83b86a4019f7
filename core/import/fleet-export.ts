/**
 * Fleet's own objects as a stack file: what `kubectl get gitrepos,helmops,clusters,clustergroups -A -o yaml`
 * prints on a Fleet management cluster (a `List`, or several YAML documents; Fleet v0.10+ field names)
 * becomes the `pulumi-fleet:` configuration of one stack. The workspace's GitRepoRestrictions and
 * Policies, when the export has them, shape its GitRepos (core/import/fleet-restrictions.ts), and its
 * Policies its HelmOps (core/import/helm-ops.ts); a GitRepo or HelmOp Fleet refuses is left out, with
 * Fleet's reasons in the notes. Every field is either mapped or named in a
 * note, which goes into the file as a comment beside its object and to the caller (stderr): nothing
 * is dropped without a word; Bundles (when exported) only for their downstreamResources. Secrets are never copied: Fleet keeps credentials in Secrets that this
 * export only names, and the stack takes them as Pulumi secrets.
 */
import { yamlSyntaxText } from "../base/yaml-documents";
import * as YAML from "yaml";
import { FleetError } from "../base/errors";
import { dnsLabelProblem } from "../base/k8s-validation";
import { CONFIG_NAMESPACE, parseStackConfig } from "../config/stack";
import { MIN_POLLING_INTERVAL_MS, parseGoDuration } from "../config/polling";
import { resolveClusterAgents } from "../agent/effective";
import { Fields, FleetObject, isObj, Note, Obj, readMetadata } from "./fields";
import { GitRepoReach, readWorkspaceRestrictions, restrictGitRepo, restrictHelmOp } from "./fleet-restrictions";
import { helmOpLeftOut, mapHelmOp, readHelmOpSpec } from "./helm-ops";
import { noteDownstreamResources } from "./downstream-resources";
import { objectName } from "../model/k8s-object";

export interface ImportNote {
  /** For example `GitRepo fleet-default/web`. */
  object: string;
  field: string;
  text: string;
}

export interface ImportResult {
  /** The stack file's text. */
  text: string;
  notes: ImportNote[];
  workspace: string;
  counts: { clusters: number; clusterGroups: number; gitRepos: number; helmOps: number };
  /** GitRepos Fleet refuses under the workspace's GitRepoRestrictions and Policies: not in the file, each reason in the notes. */
  refused: string[];
  /** HelmOps not in the file, each reason in the notes: Fleet refuses them (its validation, the Policies), or the file cannot say them. */
  refusedHelmOps: string[];
}

type Fleet = FleetObject;

const FLEET_GROUP = "fleet.cattle.io/";
/** Bundles are read only for their downstreamResources (core/import/downstream-resources.ts). */
const KINDS = ["GitRepo", "HelmOp", "Cluster", "ClusterGroup", "GitRepoRestriction", "Policy", "Bundle"] as const;
/** The kinds that make a workspace worth importing; restrictions only shape its GitRepos and HelmOps. */
const WORKSPACE_KINDS: readonly string[] = ["GitRepo", "HelmOp", "Cluster", "ClusterGroup"];

/**
 * `source` names the input in errors and the file header. `workspace`: the Fleet namespace to import
 * (a GitRepo targets only the clusters of its own namespace); required when the export has several.
 */
export function importFleetExport(text: string, source: string, options: { workspace?: string } = {}): ImportResult {
  const objects = readObjects(text, source);
  const notes: ImportNote[] = [];
  const workspaces = [...new Set(objects.fleet.filter((o) => WORKSPACE_KINDS.includes(o.kind)).map((o) => o.namespace))].sort();
  const workspace = options.workspace ?? (workspaces.length === 1 ? workspaces[0] : undefined);
  if (!workspace) {
    throw new FleetError(
      workspaces.length
        ? `holds several Fleet workspaces (${workspaces.join(", ")}); a GitRepo targets only the clusters of its own, so import one at a time with --workspace NAME`
        : "holds no Fleet GitRepo, HelmOp, Cluster or ClusterGroup (kubectl get gitrepos,helmops,clusters,clustergroups -A -o yaml)",
      { file: source },
    );
  }
  if (!workspaces.includes(workspace))
    throw new FleetError(`has no objects in workspace ${JSON.stringify(workspace)} (it has ${workspaces.join(", ") || "none"})`, { file: source });
  for (const o of objects.other)
    notes.push({
      object: o,
      field: "",
      text: "not a Fleet GitRepo, HelmOp, Cluster, ClusterGroup, GitRepoRestriction or Policy: not imported (a Secret's contents are never copied)",
    });
  const mine = (kind: Fleet["kind"]) => objects.fleet.filter((o) => o.kind === kind && o.namespace === workspace).sort((a, b) => (a.name < b.name ? -1 : 1));

  const comments = new Map<string, string[]>();
  const noteFor = (o: Fleet, path: string) => (field: string, textOf: string) => {
    notes.push({ object: objectName(o), field, text: textOf });
    comments.set(path, [...(comments.get(path) ?? []), ` ${field}: ${textOf}`]);
  };
  /** A line in the file only, beside the object: where a value came from, nothing to act on. */
  const remarkFor = (path: string) => (field: string, textOf: string) => comments.set(path, [...(comments.get(path) ?? []), ` ${field}: ${textOf}`]);
  /** Notes on what the file has no place for (restriction objects, refused GitRepos and HelmOps): in its header. */
  const headerNotes: string[] = [];
  const headerNoteFor = (o: Fleet) => (field: string, textOf: string) => {
    notes.push({ object: objectName(o), field, text: textOf });
    headerNotes.push(` ${objectName(o)}: ${field}: ${textOf}`);
  };
  const clusters = mine("Cluster").map((o, i) => mapCluster(o, noteFor(o, `clusters.${i}`), source));
  const clusterGroups = mine("ClusterGroup").map((o, i) => mapClusterGroup(o, noteFor(o, `clusterGroups.${i}`), source));
  const restrictions = readWorkspaceRestrictions([...mine("GitRepoRestriction"), ...mine("Policy")], headerNoteFor, source);
  const gitRepos: Obj[] = [];
  const refused: string[] = [];
  for (const o of mine("GitRepo")) {
    const reach = restrictGitRepo(restrictions, gitRepoSpec(o, source));
    if (reach.refusals.length) {
      // Fleet deploys nothing from it: importing it would deploy what Fleet does not.
      refused.push(o.name);
      for (const r of reach.refusals) headerNoteFor(o)(r.field, `Fleet refuses this GitRepo: ${r.text}; not imported`);
      continue;
    }
    const path = `gitRepos.${gitRepos.length}`;
    gitRepos.push(mapGitRepo(o, noteFor(o, path), remarkFor(path), source, reach));
    noteDownstreamResources(o.name, gitRepos.length - 1, workspace, mine("Bundle"), noteFor(o, path));
  }
  // A HelmOp's bundle is named after it, in the GitRepos' namespace: the stack's names are one set.
  const gitRepoNames = new Set(mine("GitRepo").map((o) => o.name));
  const helmOps: Obj[] = [];
  const refusedHelmOps: string[] = [];
  for (const o of mine("HelmOp")) {
    const spec = readHelmOpSpec(o);
    const leftOut = helmOpLeftOut(o, spec, gitRepoNames);
    const reach = leftOut.length ? undefined : restrictHelmOp(restrictions, spec);
    const refusals = leftOut.length ? leftOut : reach!.refusals.map((r) => ({ field: r.field, text: `Fleet refuses this HelmOp: ${r.text}; not imported` }));
    if (refusals.length) {
      // Fleet deploys nothing from it, or the file would deploy it where or as Fleet does not.
      refusedHelmOps.push(o.name);
      for (const r of refusals) headerNoteFor(o)(r.field, r.text);
      continue;
    }
    const path = `helmOps.${helmOps.length}`;
    helmOps.push(mapHelmOp(o, spec, noteFor(o, path), remarkFor(path), reach!, source));
  }

  const config: Obj = {
    agent: { enabled: false },
    ...(clusters.length ? { clusters } : {}),
    ...(clusterGroups.length ? { clusterGroups } : {}),
    ...(gitRepos.length ? { gitRepos } : {}),
    ...(helmOps.length ? { helmOps } : {}),
  };
  // What is written must be a valid stack: checked as `npm run plan` will read it, before anything is written.
  resolveClusterAgents(parseStackConfig(config, source, "/"));
  const counts = { clusters: clusters.length, clusterGroups: clusterGroups.length, gitRepos: gitRepos.length, helmOps: helmOps.length };
  return { text: render(config, comments, { headerNotes, source, workspace, counts }), notes, workspace, counts, refused, refusedHelmOps };
}

function readObjects(text: string, source: string): { fleet: Fleet[]; other: string[] } {
  const fleet: Fleet[] = [];
  const other: string[] = [];
  YAML.parseAllDocuments(text).forEach((doc, d) => {
    if (doc.errors.length) throw new FleetError(`document ${d + 1} is not valid YAML: ${yamlSyntaxText(doc.errors[0].message)}`, { file: source });
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) return;
    if (!isObj(value)) throw new FleetError(`document ${d + 1} is not a Kubernetes object or List`, { file: source });
    const items = Array.isArray(value.items) && (value.kind === undefined || String(value.kind).endsWith("List")) ? value.items : [value];
    items.forEach((item: unknown, i: number) => {
      const where = items.length > 1 || value.items ? `document ${d + 1}, items[${i}]` : `document ${d + 1}`;
      if (!isObj(item) || !isObj(item.metadata) || typeof item.metadata.name !== "string")
        throw new FleetError(`${where}: not a Kubernetes object (no metadata.name)`, { file: source });
      const kind = String(item.kind ?? "");
      const name = item.metadata.name;
      if (!String(item.apiVersion ?? "").startsWith(FLEET_GROUP) || !(KINDS as readonly string[]).includes(kind)) {
        other.push(objectName({ kind: kind || "object", namespace: String(item.metadata.namespace ?? ""), name }));
        return;
      }
      fleet.push({ kind: kind as Fleet["kind"], name, namespace: String(item.metadata.namespace ?? ""), raw: item });
    });
  });
  return { fleet, other };
}

function checkName(o: Fleet, source: string): string {
  const problem = dnsLabelProblem(o.name);
  // Names carry over into bundle names and every object's labels: renaming here would redeploy everything.
  if (problem) throw new FleetError(`${objectName(o)}: its name is not usable as a stack name (${problem}); rename it in Fleet first`, { file: source });
  return o.name;
}

function mapCluster(o: Fleet, note: Note, source: string): Obj {
  const name = checkName(o, source);
  const { labels, annotations } = readMetadata(o, note, ["labels", "annotations"]);
  const spec = new Fields(o.raw.spec, "spec.", note);
  const secret = spec.str("kubeConfigSecret");
  const secretNs = spec.str("kubeConfigSecretNamespace") ?? o.namespace;
  note(
    "context",
    `placeholder: the kubectl context that reaches this cluster, or a kubeconfig as a Pulumi secret instead (docs/coming-from-fleet.md)${secret ? `; Fleet read it from ${objectName({ kind: "Secret", namespace: secretNs, name: secret })}, which is not copied` : ""}`,
  );
  const out: Obj = { name, context: name };
  if (Object.keys(labels).length) out.labels = labels;
  if (Object.keys(annotations).length) out.annotations = annotations;
  const templateValues = spec.take("templateValues");
  if (isObj(templateValues) && Object.keys(templateValues).length) out.templateValues = templateValues;
  const agent = clusterAgent(spec, note);
  if (Object.keys(agent).length) out.agent = agent;
  // Fleet's paused Cluster: its BundleDeployments are not updated. Here nothing on it changes until the pause is removed.
  if (spec.take("paused") === true) out.paused = { reason: "paused in Fleet (Cluster spec.paused) when it was imported" };
  spec.unmapped("clientID", "the identity Fleet's agent registers with; deploys here use the cluster's credentials");
  spec.unmapped("redeployAgentGeneration", "forces Fleet to redeploy its agent; this project's agent rolls when its configuration changes");
  spec.rest("not known to this importer");
  return out;
}

/** Fleet's per-cluster agent settings, as this project's per-cluster agent settings (used once `agent.enabled` is true). */
function clusterAgent(spec: Fields, note: Note): Obj {
  const agent: Obj = {};
  const env = spec.take("agentEnvVars");
  if (Array.isArray(env)) {
    const plain = env.filter((e) => isObj(e) && typeof e.name === "string" && e.valueFrom === undefined);
    if (plain.length) agent.env = Object.fromEntries(plain.map((e) => [String(e.name), String(e.value ?? "")]));
    for (const e of env.filter((x) => !plain.includes(x)))
      note("spec.agentEnvVars", `${JSON.stringify(e)}: not mapped: only name/value pairs are (valueFrom reads the cluster)`);
  }
  const ns = spec.str("agentNamespace");
  if (ns) agent.namespace = ns;
  const repo = spec.str("privateRepoURL");
  if (repo) agent.privateRepoURL = repo;
  const tolerations = spec.take("agentTolerations");
  if (Array.isArray(tolerations) && tolerations.length) agent.tolerations = tolerations;
  const affinity = spec.take("agentAffinity");
  if (isObj(affinity) && Object.keys(affinity).length) agent.affinity = affinity;
  const resources = spec.take("agentResources");
  if (isObj(resources) && Object.keys(resources).length) agent.resources = resources;
  const hostNetwork = spec.take("hostNetwork");
  if (typeof hostNetwork === "boolean") agent.hostNetwork = hostNetwork;
  const pullSecrets = spec.take("agentPullSecrets");
  if (Array.isArray(pullSecrets) && pullSecrets.length) agent.pullSecrets = pullSecrets.map((s) => String((s as Obj).name));
  const scheduling = new Fields(spec.take("agentSchedulingCustomization"), "spec.agentSchedulingCustomization.", note);
  const pc = scheduling.take("priorityClass");
  if (isObj(pc)) agent.priorityClass = { value: pc.value ?? 0, ...(pc.preemptionPolicy ? { preemptionPolicy: pc.preemptionPolicy } : {}) };
  const pdb = scheduling.take("podDisruptionBudget");
  if (isObj(pdb))
    agent.podDisruptionBudget =
      pdb.minAvailable !== undefined && pdb.minAvailable !== "" ? { minAvailable: pdb.minAvailable } : { maxUnavailable: pdb.maxUnavailable };
  scheduling.rest("not known to this importer");
  return agent;
}

function mapClusterGroup(o: Fleet, note: Note, source: string): Obj {
  const name = checkName(o, source);
  const { labels } = readMetadata(o, note, ["labels"]);
  const spec = new Fields(o.raw.spec, "spec.", note);
  const selector = spec.take("selector");
  spec.rest("not known to this importer");
  const out: Obj = { name };
  if (Object.keys(labels).length) out.labels = labels;
  if (isObj(selector)) {
    out.selector = selector;
  } else {
    // Fleet: a group without a selector has no clusters. The stack requires one; this one matches none, visibly.
    note("spec.selector", "absent: Fleet's group then has no clusters; the selector below matches none");
    out.selector = { matchExpressions: [{ key: "pulumi-fleet.io/no-selector-in-fleet", operator: "Exists" }] };
  }
  return out;
}

/** The fields of a GitRepo that Fleet's restrictions judge. */
function gitRepoSpec(o: Fleet, source: string): Parameters<typeof restrictGitRepo>[1] {
  const spec = isObj(o.raw.spec) ? o.raw.spec : {};
  const str = (k: string) => (typeof spec[k] === "string" && spec[k] !== "" ? (spec[k] as string) : undefined);
  const repo = str("repo");
  if (!repo) throw new FleetError(`${objectName(o)}: spec.repo is missing`, { file: source });
  return { repo, serviceAccount: str("serviceAccount"), targetNamespace: str("targetNamespace"), clientSecretName: str("clientSecretName") };
}

/** `reach`: what the workspace's GitRepoRestrictions and Policies make of it (a GitRepo Fleet refuses never gets here). */
function mapGitRepo(o: Fleet, note: Note, remark: Note, source: string, reach: GitRepoReach): Obj {
  const name = checkName(o, source);
  readMetadata(o, note, []);
  const spec = new Fields(o.raw.spec, "spec.", note);
  const out: Obj = { name, repo: spec.str("repo") };
  for (const k of ["branch", "revision", "targetNamespace", "helmRepoURLRegex"]) {
    const v = spec.str(k);
    if (v) out[k] = v;
  }
  spec.take("serviceAccount");
  if (reach.serviceAccount) out.serviceAccount = reach.serviceAccount.value;
  if (reach.serviceAccount?.from.length) remark("serviceAccount", `Fleet's defaultServiceAccount, from ${reach.serviceAccount.from.join(", ")}`);
  for (const key of ["allowedServiceAccounts", "allowedTargetNamespaces"] as const) {
    const allowed = reach[key];
    if (!allowed) continue;
    out[key] = allowed.value;
    remark(key, `from ${allowed.from.join(", ")}`);
  }
  for (const u of reach.unchecked) note(u.field, u.text);
  const paths = spec.take("paths");
  if (Array.isArray(paths) && paths.length) out.paths = paths;
  const targets = spec.take("targets");
  if (Array.isArray(targets) && targets.length) out.targets = targets;
  for (const k of ["keepResources", "deleteNamespace", "paused", "insecureSkipTLSVerify"]) if (spec.take(k) === true) out[k] = true;
  // The objects exist already, deployed by Fleet: the first up adopts them (docs/coming-from-fleet.md).
  out.takeOwnership = true;
  // Fleet honours fleet.yaml helm.takeOwnership and lets overrideTargets reach any cluster of the workspace;
  // the stack's defaults refuse the first and narrow the second. The importer does not read the content, so
  // it keeps Fleet's behaviour: the bundles deploy where and as Fleet deploys them (the file header says so).
  out.allowTakeOwnership = true;
  out.allowOverrideTargets = true;
  const ca = spec.str("caBundle");
  if (ca) {
    const pem = Buffer.from(ca, "base64").toString("utf8");
    if (pem.includes("-----BEGIN CERTIFICATE-----")) out.caBundle = pem;
    else note("spec.caBundle", "not mapped: it is not base64 of a PEM certificate bundle");
  }
  spec.take("clientSecretName");
  const auth = reach.clientSecretName;
  const defaulted = auth?.from.length
    ? `absent; Fleet uses defaultClientSecretName ${JSON.stringify(auth.value)}, from ${auth.from.join(", ")}`
    : JSON.stringify(auth?.value);
  if (auth)
    note(
      "spec.clientSecretName",
      `${defaulted}: not copied: set auth (username + token, or sshPrivateKey + knownHosts) as Pulumi secrets, from ${objectName({ kind: "Secret", namespace: o.namespace, name: auth.value })}`,
    );
  const helm = spec.str("helmSecretName");
  if (helm)
    note(
      "spec.helmSecretName",
      `${JSON.stringify(helm)}: not copied: set helmSecret (username + password as Pulumi secrets, cacerts, insecureSkipVerify, basicHTTP) from ${objectName({ kind: "Secret", namespace: o.namespace, name: helm })}; remote charts also need allowedChartURLs`,
    );
  spec.unmapped("helmSecretNameForPaths", "per-path Helm credentials are not offered; give the GitRepo one helmSecret, or split it");
  // Read by `npm run watch` as Fleet's controller reads them (core/config/polling.ts refuses less than a second).
  const polling = spec.str("pollingInterval");
  const pollingMs = polling === undefined ? undefined : parseGoDuration(polling);
  if (pollingMs !== undefined && (pollingMs === 0 || pollingMs >= MIN_POLLING_INTERVAL_MS)) out.pollingInterval = polling;
  else if (polling !== undefined) note("spec.pollingInterval", `${JSON.stringify(polling)}: not mapped: the watcher polls at most once a second`);
  if (spec.take("disablePolling") === true) out.disablePolling = true;
  spec.unmapped("webhookSecret", "no webhook receiver: trigger the CI job instead (docs/continuous-delivery.md)");
  spec.unmapped("forceSyncGeneration", "set forceSyncGeneration in the bundles' fleet.yaml");
  spec.unmapped("correctDrift", "set correctDrift.enabled in the bundles' fleet.yaml (or run `up --refresh`)");
  spec.unmapped("imageScanInterval", "image scans are refused (they commit to git from the controller)");
  spec.unmapped("imageScanCommit", "image scans are refused");
  spec.unmapped("ociRegistrySecret", "bundles are read from git, never stored in an OCI registry");
  spec.unmapped("bundles", "explicit bundle definitions are not offered; use paths and fleet.yaml");
  spec.rest("not known to this importer");
  return out;
}

function render(
  config: Obj,
  comments: Map<string, string[]>,
  { headerNotes, source, workspace, counts }: { headerNotes: string[]; source: string; workspace: string; counts: ImportResult["counts"] },
): string {
  const doc = new YAML.Document({ config: Object.fromEntries(Object.entries(config).map(([k, v]) => [`${CONFIG_NAMESPACE}:${k}`, v])) });
  doc.commentBefore = [
    ` Imported by \`npm run import\` from ${source}, Fleet workspace ${workspace}: ${counts.clusters} clusters, ${counts.clusterGroups} cluster groups, ${counts.gitRepos} GitRepos, ${counts.helmOps} HelmOps.`,
    " Before the first preview: give each cluster its credentials (the `context` placeholders), read every",
    ' "not mapped" comment, and follow the migration order in docs/coming-from-fleet.md. No secret was copied.',
    " Every GitRepo and HelmOp has takeOwnership: true, so the first up adopts the objects Fleet deployed; remove it afterwards.",
    " Every GitRepo has allowTakeOwnership and allowOverrideTargets: true, as Fleet behaves (fleet.yaml helm.takeOwnership",
    " honoured, overrideTargets reaching any cluster of the stack); remove them where the content uses neither.",
    " fleet.yaml helm.valuesFrom and Helm's lookup read only the deployment's namespace and allowedTargetNamespaces here (Fleet's",
    " agent reads wherever its identity may): a bundle reading elsewhere fails naming the namespace; allow it in allowedTargetNamespaces.",
    ...(counts.helmOps
      ? [
          " Every HelmOp has allowedChartURLs derived from its chart's URL (nothing is pulled without them): review them, and set the",
          " helmSecret of each whose comment names a Secret.",
        ]
      : []),
    ...(headerNotes.length
      ? [
          " Fleet's GitRepoRestrictions and Policies of this workspace, and the GitRepos and HelmOps left out (Fleet refuses them, or the file cannot say them):",
          ...headerNotes,
        ]
      : []),
  ].join("\n");
  const agent = doc.getIn(["config", `${CONFIG_NAMESPACE}:agent`], true) as YAML.Node;
  agent.commentBefore =
    " Fleet's own agent keeps running on the clusters until Fleet is removed; deploys never go through an agent here.\n Set enabled: true (with apiServerURL) only to deploy this project's agent (docs/agent.md).";
  for (const [path, lines] of comments) {
    const [list, index] = path.split(".");
    const node = doc.getIn(["config", `${CONFIG_NAMESPACE}:${list}`, Number(index)], true) as YAML.Node;
    node.commentBefore = lines.join("\n");
  }
  return doc.toString({ lineWidth: 0 });
}
