/**
 * Fleet's HelmOps (fleet.cattle.io/v1alpha1, Fleet v0.16: helmop_types.go, helmops/reconciler) as the
 * stack file's `helmOps` entries (core/config/helm-op.ts): the spec's BundleSpec fields under the same
 * keys, the operator's fields that make the entry deploy as Fleet deploys it (allowedChartURLs derived
 * from the chart's URL, takeOwnership for the move), and a note for every field the stack has no place
 * for. Which HelmOps Fleet refuses (its `validate`, then the Policies: fleet-restrictions.ts) is decided
 * before mapping; a refused one never reaches mapHelmOp.
 */
import { FleetError } from "../base/errors";
import { dnsLabelProblem } from "../base/k8s-validation";
import { chartHostPattern, chartURLParts, helmOpChartProblem, quoteMeta } from "../config/helm-op";
import { keysOf } from "../config/field-table";
import { HELM_OP_FIELDS } from "../config/stack-fields";
import { HELM_FIELDS, OPTION_FIELDS } from "../config/fleetyaml-fields";
import { TARGET_CRITERIA_FIELDS } from "../config/common-fields";
import { MIN_POLLING_INTERVAL_MS, parseGoDuration } from "../config/polling";
import { objectName } from "../model/k8s-object";
import { Fields, FleetObject, isObj, Note, Obj, readMetadata } from "./fields";
import type { HelmOpReach } from "./fleet-restrictions";

/** Fleet's HelmOptions fields that the stack's helm block has under the same names: fleet.yaml's, but valuesFiles (refused). */
const HELM_KEYS = keysOf(HELM_FIELDS).filter((k) => k !== "valuesFiles");
/** The order of an entry's keys in the file: the stack format's own. */
const ENTRY_ORDER = keysOf(HELM_OP_FIELDS);
const TARGET_KEYS = [...keysOf(TARGET_CRITERIA_FIELDS), "doNotDeploy"];
/** Options that read files (a HelmOp has none) or that Fleet fills in itself. */
const NO_FILES = "it reads the bundle's files, and a HelmOp has none (Fleet deploys the chart alone)";
const OPTIONS_NOT_MAPPED: Record<string, string> = {
  kustomize: NO_FILES,
  yaml: NO_FILES,
  downstreamResources:
    "the stack's helmOps hand no Secrets to clusters: create them there another way (a GitRepo's downstreamResources, with the HelmOp's namespace)",
  overwrites: "Fleet's own bookkeeping (set by Fleet)",
  allowedTargetNamespaceSelector: "Fleet's own bookkeeping (propagated from a GitRepoRestriction, which does not apply to HelmOps)",
};

/** BundleDeploymentOptions a HelmOp's spec and each of its targets have, under the stack's same keys: fleet.yaml's, but helm (mapped on its own) and those not mapped. */
const OPTION_KEYS = keysOf(OPTION_FIELDS).filter((k) => k !== "helm" && !(k in OPTIONS_NOT_MAPPED));

/** The fields of a HelmOp that Fleet's validation and Policies judge, read without noting anything. */
export interface HelmOpSpec {
  helm?: Obj;
  repo?: string;
  chart?: string;
  version?: string;
  serviceAccount?: string;
  helmSecretName?: string;
  /** Each target by the name Fleet gives it (target000, target001... for an unnamed one). */
  targets: { name: string; serviceAccount?: string; helm?: Obj }[];
}

const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);

export function readHelmOpSpec(o: FleetObject): HelmOpSpec {
  const spec = isObj(o.raw.spec) ? o.raw.spec : {};
  const helm = isObj(spec.helm) ? spec.helm : undefined;
  const targets = (Array.isArray(spec.targets) ? spec.targets : []).map((t: unknown, i: number) => {
    const target = isObj(t) ? t : {};
    return {
      name: str(target.name) ?? `target${String(i).padStart(3, "0")}`,
      serviceAccount: str(target.serviceAccount),
      helm: isObj(target.helm) ? target.helm : undefined,
    };
  });
  return {
    helm,
    repo: str(helm?.repo),
    chart: str(helm?.chart),
    version: str(helm?.version),
    serviceAccount: str(spec.serviceAccount),
    helmSecretName: str(spec.helmSecretName),
    targets,
  };
}

/**
 * Why the HelmOp cannot be in the file, each by its field: Fleet's `validate` (it deploys nothing from
 * such a HelmOp), or what the stack cannot say without deploying where or as Fleet does not.
 */
export function helmOpLeftOut(o: FleetObject, spec: HelmOpSpec, gitRepoNames: ReadonlySet<string>): { field: string; text: string }[] {
  if (!spec.helm) return [{ field: "spec.helm", text: "Fleet refuses this HelmOp: helm options are empty in the HelmOp's spec; not imported" }];
  const problem = helmOpChartProblem({ repo: spec.repo, chart: spec.chart, version: spec.version });
  // Fleet stops at its validation: the Policies are not read for such a HelmOp.
  if (problem) return [{ field: "spec.helm", text: `Fleet refuses this HelmOp: ${problem}; not imported` }];
  const out: { field: string; text: string }[] = [];
  const urls: [string, string | undefined][] = [
    ["spec.helm.repo", spec.repo],
    ["spec.helm.chart", spec.chart],
    ...spec.targets.flatMap((t, i): [string, string | undefined][] => [
      [`spec.targets[${i}].helm.repo`, str(t.helm?.repo)],
      [`spec.targets[${i}].helm.chart`, str(t.helm?.chart)],
    ]),
  ];
  for (const [field, url] of urls) {
    // The value is not quoted: what is before the host is a credential.
    if (url && /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(url))
      out.push({
        field,
        text: "its URL has a user name or password before the host: not copied, and not imported (no secret is copied); add this HelmOp by hand with the URL without them and helmSecret",
      });
  }
  if (gitRepoNames.has(o.name))
    out.push({
      field: "metadata.name",
      text: "also a GitRepo's name in this workspace; the stack's names are unique across gitRepos and helmOps: not imported; add it by hand under another name (its bundle is then new: the first up adopts the objects with takeOwnership)",
    });
  const spec0 = isObj(o.raw.spec) ? o.raw.spec : {};
  if (Array.isArray(spec0.targetRestrictions) && spec0.targetRestrictions.length)
    out.push({
      field: "spec.targetRestrictions",
      text: `${JSON.stringify(spec0.targetRestrictions)}: the stack's helmOps cannot say it (Fleet deploys only to targets these also allow); not imported, so that nothing deploys where Fleet does not: add it by hand with targets that select only the allowed clusters`,
    });
  return out;
}

/** `reach`: what the workspace's Policies make of it (a HelmOp Fleet refuses never gets here). */
export function mapHelmOp(o: FleetObject, spec: HelmOpSpec, note: Note, remark: Note, reach: HelmOpReach, source: string): Obj {
  const problem = dnsLabelProblem(o.name);
  if (problem) throw new FleetError(`${objectName(o)}: its name is not usable as a stack name (${problem}); rename it in Fleet first`, { file: source });
  readMetadata(o, note, []);
  const f = new Fields(o.raw.spec, "spec.", note);
  const out: Obj = { name: o.name, helm: mapHelm(f.take("helm"), "spec.helm.", note) };
  copyOptions(f, out);
  f.take("serviceAccount");
  if (reach.serviceAccount) out.serviceAccount = reach.serviceAccount.value;
  if (reach.serviceAccount?.from.length) remark("serviceAccount", `the Policies' helmOp.defaultServiceAccount, from ${reach.serviceAccount.from.join(", ")}`);
  const targets = f.take("targets");
  if (Array.isArray(targets) && targets.length) out.targets = targets.map((t, i) => mapTarget(t, `spec.targets[${i}].`, note));
  // The CRD's default: Fleet's order of targets, the first match's options, as the stack reads them.
  const mode = f.take("targetCustomizationMode");
  if (mode !== undefined && mode !== "" && mode !== "FirstMatch")
    note(
      "spec.targetCustomizationMode",
      `${JSON.stringify(mode)}: not mapped: the stack applies the options of the first target that matches a cluster (FirstMatch), where Fleet merges every matching target's: merge them into the first by hand`,
    );
  const labels = f.take("labels");
  if (isObj(labels) && Object.keys(labels).length) out.labels = labels;
  if (f.take("paused") === true) out.paused = true;
  const rollout = f.take("rolloutStrategy");
  if (isObj(rollout) && Object.keys(rollout).length) out.rolloutStrategy = rollout;
  const dependsOn = f.take("dependsOn");
  if (Array.isArray(dependsOn) && dependsOn.length) {
    out.dependsOn = dependsOn;
    dependsOn.forEach((d, i) => {
      const named = isObj(d) && typeof d.name === "string" && d.name;
      const labels = isObj(d) && isObj(d.selector) && isObj(d.selector.matchLabels) ? Object.keys(d.selector.matchLabels) : [];
      if (named && !labels.some((k) => k === "fleet.cattle.io/repo-name" || k === "fleet.cattle.io/fleet-helm-name"))
        note(
          `spec.dependsOn[${i}]`,
          `{name: ${JSON.stringify(d.name)}}: Fleet finds that bundle anywhere in the workspace; the stack reads a plain name as a bundle of the same source (a HelmOp has only its own), so it would never be met: say whose it is with selector.matchLabels fleet.cattle.io/repo-name: <GitRepo> (or fleet.cattle.io/fleet-helm-name: <HelmOp>)`,
        );
    });
  }
  const polling = f.str("pollingInterval");
  const pollingMs = polling === undefined ? undefined : parseGoDuration(polling);
  if (pollingMs !== undefined && pollingMs >= MIN_POLLING_INTERVAL_MS) out.pollingInterval = polling;
  else if (polling !== undefined && pollingMs !== 0)
    note(
      "spec.pollingInterval",
      `${JSON.stringify(polling)}: not mapped: ${pollingMs === undefined ? "not a Go duration" : "the stack polls at most once a second"}`,
    );
  if (f.take("insecureSkipTLSVerify") === true) out.insecureSkipTLSVerify = true;

  f.take("helmSecretName");
  const secret = reach.helmSecretName;
  const hosts = credentialHosts(spec);
  if (secret) {
    const given = secret.from.length
      ? `absent; Fleet uses the Policies' helmOp.defaultHelmSecretName ${JSON.stringify(secret.value)}, from ${secret.from.join(", ")}`
      : JSON.stringify(secret.value);
    if (hosts.length) out.helmRepoURLRegex = hosts.length === 1 ? hosts[0] : hosts.map((h) => `(?:${h})`).join("|");
    note(
      "spec.helmSecretName",
      `${given}: not copied: set helmSecret (username + password as Pulumi secrets, cacerts, insecureSkipVerify, basicHTTP) from ${objectName({ kind: "Secret", namespace: o.namespace, name: secret.value })}` +
        (hosts.length
          ? `; helmRepoURLRegex ${JSON.stringify(out.helmRepoURLRegex)} sends them to the chart's ${hosts.length === 1 ? "host" : "hosts"} alone, as Helm sends Fleet's`
          : "; set helmRepoURLRegex to the URLs they go to"),
    );
  }

  const allowed = chartURLPatterns(spec);
  if (allowed.patterns.length) {
    out.allowedChartURLs = allowed.patterns;
    note(
      "allowedChartURLs",
      `${JSON.stringify(allowed.patterns)}: derived from ${allowed.from.join(", ")} so that the chart can be pulled (nothing is pulled without it): review it. ` +
        `A request elsewhere (${allowed.elsewhere.join(", ")}) is refused, its error naming a pattern to add`,
    );
  }
  for (const p of allowed.problems) note(p.field, p.text);

  // The HelmOp's targets' own accounts: Fleet deploys as them unless a Policy bounds them; the stack refuses any it is not given.
  const targetAccounts = [
    ...new Set(spec.targets.flatMap((t) => (t.serviceAccount && t.serviceAccount !== reach.serviceAccount?.value ? [t.serviceAccount] : []))),
  ];
  if (reach.allowedServiceAccounts) {
    out.allowedServiceAccounts = reach.allowedServiceAccounts.value;
    remark("allowedServiceAccounts", `from ${reach.allowedServiceAccounts.from.join(", ")}`);
  } else if (targetAccounts.length) {
    out.allowedServiceAccounts = targetAccounts;
    remark("allowedServiceAccounts", "the targets' own serviceAccounts, as Fleet deploys them (the stack refuses a target's account it is not given)");
  }
  for (const u of reach.unchecked) note(u.field, u.text);
  // Fleet honours helm.takeOwnership; the stack only when allowed.
  if (helmsOf(out).some((h) => h.takeOwnership === true)) {
    out.allowTakeOwnership = true;
    remark("allowTakeOwnership", "helm.takeOwnership is set, which Fleet honours");
  }
  // The objects exist already, deployed by Fleet: the first up adopts them (docs/coming-from-fleet.md).
  out.takeOwnership = true;

  for (const [key, why] of Object.entries(OPTIONS_NOT_MAPPED)) f.unmapped(key, why);
  f.unmapped("resources", "Fleet's own bookkeeping (a HelmOp's chart is pulled, never stored in the bundle)");
  f.unmapped("contentsId", "Fleet's own bookkeeping (contents stored in an OCI registry)");
  f.unmapped("helmOpOptions", "Fleet's own bookkeeping (set on the HelmOp's Bundle)");
  f.unmapped("valuesHash", "Fleet's own bookkeeping");
  f.take("targetRestrictions"); // a HelmOp with any is left out (helmOpLeftOut)
  f.rest("not known to this importer");
  const keys = [...ENTRY_ORDER.filter((k) => k in out), ...Object.keys(out).filter((k) => !ENTRY_ORDER.includes(k))];
  const status = isObj(o.raw.status) ? o.raw.status : {};
  const deployedVersion = typeof status.version === "string" ? status.version : "";
  const wanted = isObj(out.helm) && typeof out.helm.version === "string" ? out.helm.version : "";
  if (deployedVersion && wanted !== deployedVersion)
    note(
      "status.version",
      `Fleet deploys ${JSON.stringify(deployedVersion)}; the stack resolves ${JSON.stringify(wanted)} afresh at its first up (a new HelmOp to it), which may be a newer chart: to move over on the same one, set helm.version: ${JSON.stringify(deployedVersion)} first, then the constraint`,
    );
  return Object.fromEntries(keys.map((k) => [k, out[k]]));
}

/** The spec's (or a target's) deployment options under the stack's same keys; serviceAccount is the caller's. */
function copyOptions(f: Fields, out: Obj): void {
  for (const k of OPTION_KEYS) {
    if (k === "serviceAccount") continue;
    const v = f.take(k);
    if (v === undefined || v === null || v === "" || v === false || v === 0) continue;
    if ((isObj(v) && !Object.keys(v).length) || (Array.isArray(v) && !v.length)) continue;
    out[k] = v;
  }
}

function mapHelm(value: unknown, prefix: string, note: Note): Obj {
  const h = new Fields(value, prefix, note);
  const out: Obj = {};
  for (const k of HELM_KEYS) {
    const v = h.take(k);
    if (v === undefined || v === null || v === "" || v === false || v === 0) continue;
    if ((isObj(v) && !Object.keys(v).length) || (Array.isArray(v) && !v.length)) continue;
    out[k] = v;
  }
  h.unmapped("valuesFiles", "a HelmOp has no files to read values from (Fleet reads none); put the values in helm.values");
  h.rest("not known to this importer");
  return out;
}

function mapTarget(value: unknown, prefix: string, note: Note): Obj {
  const t = new Fields(value, prefix, note);
  const out: Obj = {};
  // Kept as given: Fleet names an unnamed target target000, target001..., and so does the stack's reader.
  for (const k of TARGET_KEYS) {
    const v = t.take(k);
    if (v !== undefined && v !== null && v !== "" && v !== false) out[k] = v;
  }
  const helm = t.take("helm");
  if (isObj(helm)) {
    const mapped = mapHelm(helm, `${prefix}helm.`, note);
    if (Object.keys(mapped).length) out.helm = mapped;
  }
  const account = t.str("serviceAccount");
  if (account) out.serviceAccount = account;
  copyOptions(t, out);
  for (const [key, why] of Object.entries(OPTIONS_NOT_MAPPED)) t.unmapped(key, why);
  t.rest("not known to this importer");
  return out;
}

const helmsOf = (entry: Obj): Obj[] => [entry.helm as Obj, ...((entry.targets as Obj[] | undefined) ?? []).flatMap((t) => (isObj(t.helm) ? [t.helm] : []))];

/** The chart locations Fleet pulls from: the spec's, and each target's (a target's helm inherits what it does not set). */
function chartLocations(spec: HelmOpSpec): { field: string; repo?: string; chart?: string }[] {
  const all = [{ field: "spec.helm", repo: spec.repo, chart: spec.chart }];
  spec.targets.forEach((t, i) => {
    const repo = str(t.helm?.repo);
    const chart = str(t.helm?.chart);
    if (repo || chart) all.push({ field: `spec.targets[${i}].helm`, repo: repo ?? spec.repo, chart: chart ?? spec.chart });
  });
  return all;
}

/**
 * allowedChartURLs for the HelmOp's charts, as the puller suggests them: a Helm repository's URL with a
 * trailing slash and `.*` (its index.yaml and the chart archives under it); an oci:// repository's
 * registry requests, https://HOST/v2/PATH/...; a .tgz URL exactly.
 */
function chartURLPatterns(spec: HelmOpSpec): { patterns: string[]; from: string[]; elsewhere: string[]; problems: { field: string; text: string }[] } {
  const patterns: string[] = [];
  const from: string[] = [];
  const elsewhere = new Set<string>();
  const problems: { field: string; text: string }[] = [];
  for (const l of chartLocations(spec)) {
    const archive = !l.repo || (l.chart ?? "").toLowerCase().endsWith(".tgz");
    const url = archive ? l.chart : l.repo;
    const field = `${l.field}.${archive ? "chart" : "repo"}`;
    const u = url ? chartURLParts(url) : undefined;
    let pattern: string | undefined;
    if (u?.scheme === "oci") {
      pattern = `${quoteMeta(`https://${u.host}/v2/${u.path.replace(/^\/+|\/+$/g, "")}/`)}.*`;
      for (const e of ["the registry's token endpoint", "a redirect of a layer to storage elsewhere", "http:// with helmSecret basicHTTP"]) elsewhere.add(e);
    } else if (u && archive) {
      pattern = quoteMeta(`${u.scheme}://${u.host}${u.path}`);
      elsewhere.add("a redirect to a download host");
    } else if (u) {
      pattern = `${quoteMeta(`${u.scheme}://${u.host}${u.path.endsWith("/") ? u.path : `${u.path}/`}`)}.*`;
      for (const e of ["a chart URL index.yaml names on another host", "a redirect"]) elsewhere.add(e);
    }
    if (!pattern) {
      if (url)
        problems.push({
          field,
          text: `${JSON.stringify(url)}: no allowedChartURLs entry derived: charts are pulled over https, http or oci:// only, so this one cannot be pulled`,
        });
      continue;
    }
    if (!patterns.includes(pattern)) patterns.push(pattern);
    if (!from.includes(field)) from.push(field);
  }
  return { patterns, from, elsewhere: [...elsewhere], problems };
}

/** helmRepoURLRegex for the chart's hosts: matched from the start, as Helm sends credentials to the repository's host. */
function credentialHosts(spec: HelmOpSpec): string[] {
  const hosts: string[] = [];
  for (const l of chartLocations(spec)) {
    const url = !l.repo || (l.chart ?? "").toLowerCase().endsWith(".tgz") ? l.chart : l.repo;
    // An oci:// registry's requests (and its token endpoint) are https://HOST/...: basicHTTP is in the Secret, not read here.
    const pattern = url ? chartHostPattern(url) : undefined;
    if (pattern && !hosts.includes(pattern)) hosts.push(pattern);
  }
  return hosts;
}
