/**
 * A stack file's `helmOps` entry: Fleet's HelmOp (v0.16.0 helmop_types.go), a chart from a Helm
 * repository or OCI registry by name and version constraint, deployed without a GitRepo. It is read into
 * a GitRepoConfig with a `helmOp` source, so the rest of the program treats it as the team boundary a
 * GitRepo is (its own pairs, identity, allowed namespaces and chart URLs, failures, records): what
 * differs is only where its one bundle comes from (core/source/helm-op.ts) and what its "commit" is
 * (the chart version it deploys).
 *
 * The spec's bundle fields are fleet.yaml's (Fleet's HelmOp spec is a BundleSpec): they become the
 * generated bundle's fleet.yaml, checked strictly by fleet.yaml's own reader when the source is read
 * (core/source/helm-op.ts: a floor above this one), so a bad one fails that HelmOp alone.
 */
import { keysOf } from "./field-table";
import { readName } from "./fields";
import { sha256Hex, stableJson } from "../base/hash";
import { GitRepoConfig, HelmOpChart, HelmOpSource, readHelmSecret, readReachFields } from "./git-repo";
import { readPolling } from "./polling";
import { Field, isPlainObject } from "./reader";
import { HELM_OP_FIELDS, HELM_OP_NO_FILES, HELM_OP_SPEC_KEYS } from "./stack-fields";
import { TARGET_CRITERIA_FIELDS } from "./common-fields";
import { readTargetCriteria, TargetCriteria } from "./target-criteria";

/** Fleet's `validate` of a HelmOp's helm options, in its words (helmop_controller.go). */
export function helmOpChartProblem(c: HelmOpChart): string | undefined {
  const fail = (msg: string) => `helm options invalid: ${msg}`;
  if ((c.chart ?? "").toLowerCase().endsWith(".tgz")) {
    if (c.repo) return fail("tarball chart with a non-empty repo field");
    if (c.version) return fail("tarball chart with a non-empty version field");
  } else if ((c.repo ?? "").toLowerCase().startsWith("oci://")) {
    if (c.chart) return fail("OCI repository with a non-empty chart field");
  } else {
    if (!c.chart) return fail("non-OCI repository with an empty chart field");
    if (!c.repo) return fail("non-tarball chart with an empty repo field");
  }
  return undefined;
}

/** Masterminds semver's StrictNewVersion: MAJOR.MINOR.PATCH with optional pre-release and build, no "v". */
const STRICT_SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;

/** Whether the version needs no resolving: an exact version, or an archive URL's chart (Fleet takes either as given). */
export function versionIsFixed(c: HelmOpChart): boolean {
  return STRICT_SEMVER.test(c.version ?? "") || (c.chart ?? "").toLowerCase().endsWith(".tgz");
}

/**
 * What a record keeps of a HelmOp's entry, to tell whether it was edited since its version was resolved
 * (Fleet resolves again at each reconcile of an edited HelmOp): a digest of the whole entry, chart and
 * spec. A digest of the values, as a deploymentID is (Fleet's too), never the values.
 */
export function helmOpEntryKey(source: Pick<HelmOpSource, "chart" | "fleetYaml">): string {
  return sha256Hex(stableJson({ chart: source.chart, spec: source.fleetYaml })).slice(0, 32);
}

export function readHelmOp(f: Field): GitRepoConfig {
  f.object(keysOf(HELM_OP_FIELDS));
  const name = readName(f.child("name"));
  const helm = f.child("helm");
  if (!helm.present) helm.fail("is required: the chart's repo, chart and version");
  const chart: HelmOpChart = {};
  for (const key of ["repo", "chart", "version"] as const) {
    const v = helm.child(key).optString();
    if (v) chart[key] = v;
  }
  const problem = helmOpChartProblem(chart);
  if (problem) helm.fail(problem);
  const targets = f.child("targets").items();
  for (const [i, t] of targets.entries()) {
    const helmOf = t.child("helm");
    if (helmOf.child("valuesFiles").present) helmOf.child("valuesFiles").fail(HELM_OP_NO_FILES);
    if (!isPlainObject(t.value)) f.child("targets").index(i).fail("must be a mapping");
  }
  if (helm.child("valuesFiles").present) helm.child("valuesFiles").fail(HELM_OP_NO_FILES);
  const raw = f.value as Record<string, unknown>;
  const fleetYaml: Record<string, unknown> = { name };
  for (const key of HELM_OP_SPEC_KEYS) if (raw[key] !== undefined && raw[key] !== null) fleetYaml[key] = raw[key];
  // Fleet's HelmOp: its targets are the bundle's (each a customization of the clusters it selects).
  if (targets.length) fleetYaml.targetCustomizations = raw.targets;
  // Named as Fleet names unnamed targets (target000...), as the bundle's own customizations are.
  const criteria: TargetCriteria[] = targets.map((t, i) => ({
    ...readTargetCriteria(new Field(pick(t.value, keysOf(TARGET_CRITERIA_FIELDS)), t.path, t.context)),
    name: ((t.value as { name?: unknown }).name as string | undefined) || `target${String(i).padStart(3, "0")}`,
  }));
  const polling = readPolling(f);
  const polled = !!polling.pollingInterval && !versionIsFixed(chart);
  const serviceAccount = f.child("serviceAccount").optString();
  const g: GitRepoConfig = {
    name,
    repo: chart.repo ? `${chart.repo}${chart.chart ? ` ${chart.chart}` : ""}` : (chart.chart ?? ""),
    paths: [],
    targets: criteria,
    keepResources: false,
    deleteNamespace: false,
    paused: false,
    allowEmpty: f.child("allowEmpty").bool(),
    insecureSkipTLSVerify: false,
    ...(polled ? { pollingInterval: polling.pollingInterval } : { disablePolling: true }),
    ...readReachFields(f),
    helmOp: { chart, fleetYaml, polled, origin: { file: f.context.file ?? "", field: f.path } },
  };
  if (serviceAccount) g.serviceAccount = serviceAccount;
  const secret = readHelmSecret(f.child("helmSecret"));
  // spec.insecureSkipTLSVerify: the chart's requests skip TLS verification (Fleet's auth.InsecureSkipVerify).
  if (f.child("insecureSkipTLSVerify").bool()) g.helmSecret = { basicHTTP: false, ...secret, insecureSkipVerify: true };
  else if (secret) g.helmSecret = secret;
  // Fleet's HelmOp sends its secret to its chart's repository (no helmRepoURLRegex there): the same by default.
  if (secret?.username && !g.helmRepoURLRegex) g.helmRepoURLRegex = chartHostPattern(chart.repo ?? chart.chart ?? "", secret.basicHTTP);
  return g;
}

function pick(value: unknown, keys: readonly string[]): Record<string, unknown> {
  const v = value as Record<string, unknown>;
  return Object.fromEntries(keys.filter((k) => v[k] !== undefined).map((k) => [k, v[k]]));
}

/** Go's regexp.QuoteMeta. */
export const quoteMeta = (s: string) => s.replace(/[\\.+*?()|[\]{}^$]/g, "\\$&");

/**
 * A chart location's URL as the puller normalizes a request's (scheme://host[:port]/path, lower-case
 * scheme and host, no default port), with the path as given; undefined for what it does not pull.
 */
export function chartURLParts(url: string): { scheme: string; host: string; path: string } | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const scheme = u.protocol.replace(/:$/, "").toLowerCase();
  if (!["http", "https", "oci"].includes(scheme) || !u.hostname) return undefined;
  const port = u.port && !(scheme === "http" && u.port === "80") && !(scheme !== "http" && u.port === "443") ? `:${u.port}` : "";
  return { scheme, host: u.hostname.toLowerCase() + port, path: u.pathname || "/" };
}

/**
 * The start of every request to a chart location's host, as a regular expression matched from the start
 * (helmRepoURLRegex's rule): `https://charts.example.com/`; an oci:// registry's requests go over https,
 * or http with basicHTTP (the registry's token endpoint on that host included).
 */
export function chartHostPattern(url: string, basicHTTP = false): string | undefined {
  const u = chartURLParts(url);
  if (!u) return undefined;
  return quoteMeta(`${u.scheme === "oci" ? (basicHTTP ? "http" : "https") : u.scheme}://${u.host}/`);
}
