/**
 * Fleet's GitRepoRestrictions and Policies of one workspace, read as Fleet v0.16 enforces them
 * (gitops/reconciler/restrictions.go, policyrestrictions, reconciler/bundle_policy.go): they apply to
 * every GitRepo of their namespace; several are aggregated in name order, the first non-empty default
 * winning (a GitRepoRestriction's before a Policy's) and allow-lists unioned. Per GitRepo this gives the
 * stack settings that carry them, or the reasons Fleet refuses the GitRepo. What has no stack setting
 * is checked here once and named in a note.
 */
import { FleetError } from "../base/errors";
import { dnsLabelProblem } from "../base/k8s-validation";
import { Fields, FleetObject, Note, readMetadata } from "./fields";
import { objectName } from "../model/k8s-object";

/** Values of one kind from several objects, with the objects that gave them (`GitRepoRestriction ns/a`). */
interface Sourced<T> {
  value: T;
  from: string[];
}
const list = (): Sourced<string[]> => ({ value: [], from: [] });
const none = (): Sourced<string | undefined> => ({ value: undefined, from: [] });

export interface WorkspaceRestrictions {
  defaultServiceAccount: Sourced<string | undefined>;
  defaultClientSecretName: Sourced<string | undefined>;
  /** GitRepoRestriction allowedServiceAccounts: Fleet checks only the GitRepo's own serviceAccount against them. */
  restrictionServiceAccounts: Sourced<string[]>;
  /** Policy allowedServiceAccounts: Fleet checks the GitRepo's, and every Bundle's and target's, against them. */
  policyServiceAccounts: Sourced<string[]>;
  clientSecretNames: Sourced<string[]>;
  /** Unanchored regular expressions (GitRepoRestriction), anchored ones (Policy): a repo passes either list. */
  restrictionRepoPatterns: Sourced<string[]>;
  policyRepoPatterns: Sourced<string[]>;
  targetNamespaces: Sourced<string[]>;
  targetNamespaceSelector: Sourced<boolean>;
  requireServiceAccount: Sourced<boolean>;
}

/** What the restrictions make of one GitRepo: settings to write, or why Fleet refuses it. */
export interface GitRepoReach {
  /** Fleet's reasons, each by the GitRepo field it is about; any reason means Fleet deploys nothing from it. */
  refusals: { field: string; text: string }[];
  /** Checks the importer could not make (a pattern JavaScript does not read): named, the GitRepo imported. */
  unchecked: { field: string; text: string }[];
  serviceAccount?: Sourced<string>;
  clientSecretName?: Sourced<string>;
  allowedServiceAccounts?: Sourced<string[]>;
  allowedTargetNamespaces?: Sourced<string[]>;
}

const named = (o: FleetObject) => objectName(o);
const byName = (a: FleetObject, b: FleetObject) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const unique = (values: string[]) => [...new Set(values)];
const sources = (...lists: Sourced<unknown>[]) => unique(lists.flatMap((l) => l.from)).join(", ");

/** `objects`: the workspace's GitRepoRestrictions and Policies. `noteFor` names what has no stack setting. */
export function readWorkspaceRestrictions(objects: FleetObject[], noteFor: (o: FleetObject) => Note, source: string): WorkspaceRestrictions {
  const r: WorkspaceRestrictions = {
    defaultServiceAccount: none(),
    defaultClientSecretName: none(),
    restrictionServiceAccounts: list(),
    policyServiceAccounts: list(),
    clientSecretNames: list(),
    restrictionRepoPatterns: list(),
    policyRepoPatterns: list(),
    targetNamespaces: list(),
    targetNamespaceSelector: { value: false, from: [] },
    requireServiceAccount: { value: false, from: [] },
  };
  // Fleet aggregates each kind in name order, then prefers the GitRepoRestriction's defaults.
  const restrictions = objects.filter((o) => o.kind === "GitRepoRestriction").sort(byName);
  const policies = objects.filter((o) => o.kind === "Policy").sort(byName);
  for (const o of restrictions) readRestriction(o, r, noteFor(o), source);
  for (const o of policies) readPolicy(o, r, noteFor(o), source);
  // A GitRepoRestriction's accounts bound only the GitRepo's own in Fleet; the stack's allowedServiceAccounts also bounds the content's.
  const why = r.policyServiceAccounts.value.length
    ? "checked at import against each GitRepo's serviceAccount, with the Policies' lists; not mapped: Fleet checks every Bundle against the Policies' lists alone, so those are each GitRepo's allowedServiceAccounts"
    : "mapped to each GitRepo's allowedServiceAccounts, which here also bounds the serviceAccount of fleet.yaml targetCustomizations: Fleet leaves those free unless a Policy lists accounts";
  for (const o of restrictions) {
    const accounts = o.raw.allowedServiceAccounts;
    if (Array.isArray(accounts) && accounts.length) noteFor(o)("allowedServiceAccounts", `${JSON.stringify(accounts)}: ${why}`);
  }
  return r;
}

function strings(fields: Fields, key: string, o: FleetObject, source: string): string[] {
  const v = fields.take(key);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) throw new FleetError(`${named(o)}: ${key} must be a list of strings`, { file: source });
  return v as string[];
}

function add(into: Sourced<string[]>, values: string[], o: FleetObject): void {
  if (!values.length) return;
  into.value.push(...values);
  into.from.push(named(o));
}

function firstDefault(into: Sourced<string | undefined>, value: string | undefined, o: FleetObject): void {
  if (!value || into.value !== undefined) return;
  into.value = value;
  into.from = [named(o)];
}

/** Fields that are checked at import but have no stack setting to keep them. */
const CHECKED_ONCE =
  "checked at import (a GitRepo it refuses is not imported); not kept: the stack has no such setting, so a GitRepo edited later is not checked";

function readRestriction(o: FleetObject, r: WorkspaceRestrictions, note: Note, source: string): void {
  readMetadata(o, note, []);
  const f = new Fields(o.raw, "", note);
  for (const k of ["apiVersion", "kind", "metadata", "status"]) f.take(k);
  firstDefault(r.defaultServiceAccount, f.str("defaultServiceAccount"), o);
  firstDefault(r.defaultClientSecretName, f.str("defaultClientSecretName"), o);
  add(r.restrictionServiceAccounts, strings(f, "allowedServiceAccounts", o, source), o);
  const repoPatterns = strings(f, "allowedRepoPatterns", o, source);
  add(r.restrictionRepoPatterns, repoPatterns, o);
  if (repoPatterns.length) note("allowedRepoPatterns", `${JSON.stringify(repoPatterns)}: ${CHECKED_ONCE}`);
  const secretNames = strings(f, "allowedClientSecretNames", o, source);
  add(r.clientSecretNames, secretNames, o);
  if (secretNames.length)
    note(
      "allowedClientSecretNames",
      `${JSON.stringify(secretNames)}: ${CHECKED_ONCE}; git credentials are each GitRepo's auth here (Pulumi secrets), not Secrets by name`,
    );
  const namespaces = strings(f, "allowedTargetNamespaces", o, source);
  add(r.targetNamespaces, namespaces, o);
  // Fleet compares names exactly; here `*` is a pattern. An entry that is no namespace name matches nothing in Fleet, so it is not carried.
  const notNames = namespaces.filter((n) => dnsLabelProblem(n));
  if (notNames.length)
    note(
      "allowedTargetNamespaces",
      `${JSON.stringify(notNames)}: not mapped: not namespace names, so Fleet matches no targetNamespace with them (in the stack, * would be a pattern)`,
    );
  const selector = f.take("allowedTargetNamespaceSelector");
  if (selector !== undefined && selector !== null) {
    r.targetNamespaceSelector.value = true;
    r.targetNamespaceSelector.from.push(named(o));
    note(
      "allowedTargetNamespaceSelector",
      `${JSON.stringify(selector)}: not mapped: it selects namespaces by their labels on each downstream cluster, which a list of names cannot say; a GitRepo without targetNamespace is refused as Fleet does, the others deploy to their targetNamespace whatever its labels (list the namespaces in allowedTargetNamespaces to bound them)`,
    );
  }
  f.rest("not known to this importer");
}

function readPolicy(o: FleetObject, r: WorkspaceRestrictions, note: Note, source: string): void {
  readMetadata(o, note, []);
  const f = new Fields(o.raw, "", note);
  for (const k of ["apiVersion", "kind", "metadata", "status"]) f.take(k);
  if (f.take("requireServiceAccount") === true) {
    r.requireServiceAccount.value = true;
    r.requireServiceAccount.from.push(named(o));
    note(
      "requireServiceAccount",
      `true: ${CHECKED_ONCE} (without serviceAccount, a bundle deploys as fleet-default where that account exists, else with the stack's own credentials)`,
    );
  }
  add(r.policyServiceAccounts, strings(f, "allowedServiceAccounts", o, source), o);
  const git = new Fields(f.take("gitRepo"), "gitRepo.", note);
  firstDefault(r.defaultServiceAccount, git.str("defaultServiceAccount"), o);
  firstDefault(r.defaultClientSecretName, git.str("defaultClientSecretName"), o);
  const secretNames = strings(git, "allowedClientSecretNames", o, source);
  add(r.clientSecretNames, secretNames, o);
  if (secretNames.length)
    note(
      "gitRepo.allowedClientSecretNames",
      `${JSON.stringify(secretNames)}: ${CHECKED_ONCE}; git credentials are each GitRepo's auth here (Pulumi secrets), not Secrets by name`,
    );
  const repoPatterns = strings(git, "allowedRepoPatterns", o, source);
  add(r.policyRepoPatterns, repoPatterns, o);
  if (repoPatterns.length) note("gitRepo.allowedRepoPatterns", `${JSON.stringify(repoPatterns)}: ${CHECKED_ONCE}`);
  git.rest("not known to this importer");
  f.unmapped("helmOp", "HelmOps are not imported (this importer reads GitRepos, Clusters and ClusterGroups)");
  f.rest("not known to this importer");
}

/** The restrictions applied to one GitRepo's spec, in Fleet's order of checks; every refusal is listed, not only Fleet's first. */
export function restrictGitRepo(
  r: WorkspaceRestrictions,
  spec: { serviceAccount?: string; targetNamespace?: string; repo: string; clientSecretName?: string },
): GitRepoReach {
  const out: GitRepoReach = { refusals: [], unchecked: [] };
  const refuse = (field: string, why: string, ...from: Sourced<unknown>[]) => out.refusals.push({ field, text: `${why} (${sources(...from)})` });

  const namespaces = r.targetNamespaces;
  if (!spec.targetNamespace) {
    if (namespaces.value.length) refuse("spec.targetNamespace", "absent, and allowedTargetNamespaces requires one", namespaces);
    if (r.targetNamespaceSelector.value) refuse("spec.targetNamespace", "absent, and allowedTargetNamespaceSelector requires one", r.targetNamespaceSelector);
  } else if (namespaces.value.length && !namespaces.value.includes(spec.targetNamespace)) {
    refuse(
      "spec.targetNamespace",
      `${JSON.stringify(spec.targetNamespace)} is not in allowedTargetNamespaces ${JSON.stringify(unique(namespaces.value))}`,
      namespaces,
    );
  }

  const accounts: Sourced<string[]> = {
    value: unique([...r.restrictionServiceAccounts.value, ...r.policyServiceAccounts.value]),
    from: [...r.restrictionServiceAccounts.from, ...r.policyServiceAccounts.from],
  };
  if (spec.serviceAccount && accounts.value.length && !accounts.value.includes(spec.serviceAccount)) {
    refuse("spec.serviceAccount", `${JSON.stringify(spec.serviceAccount)} is not in allowedServiceAccounts ${JSON.stringify(accounts.value)}`, accounts);
  }
  // Fleet gives the default without checking it against the allow-lists (isAllowed); the Bundle check below still applies.
  const serviceAccount = spec.serviceAccount ?? r.defaultServiceAccount.value;
  if (serviceAccount) out.serviceAccount = { value: serviceAccount, from: spec.serviceAccount ? [] : r.defaultServiceAccount.from };

  checkRepo(spec.repo, r, out);

  if (spec.clientSecretName && r.clientSecretNames.value.length && !r.clientSecretNames.value.includes(spec.clientSecretName)) {
    refuse(
      "spec.clientSecretName",
      `${JSON.stringify(spec.clientSecretName)} is not in allowedClientSecretNames ${JSON.stringify(unique(r.clientSecretNames.value))}`,
      r.clientSecretNames,
    );
  }
  const clientSecretName = spec.clientSecretName ?? r.defaultClientSecretName.value;
  if (clientSecretName) out.clientSecretName = { value: clientSecretName, from: spec.clientSecretName ? [] : r.defaultClientSecretName.from };

  if (r.requireServiceAccount.value && !serviceAccount)
    refuse("spec.serviceAccount", "absent, no default, and requireServiceAccount is set", r.requireServiceAccount);
  // Fleet's Bundle check: a GitRepo it accepts still deploys nothing when its account is not one the Policies list.
  const policyAccounts = r.policyServiceAccounts;
  if (
    serviceAccount &&
    policyAccounts.value.length &&
    !policyAccounts.value.includes(serviceAccount) &&
    !out.refusals.some((x) => x.field === "spec.serviceAccount")
  ) {
    refuse(
      "spec.serviceAccount",
      `${JSON.stringify(serviceAccount)} is not in the Policies' allowedServiceAccounts ${JSON.stringify(unique(policyAccounts.value))}, so Fleet refuses each of its Bundles`,
      policyAccounts,
    );
  }

  if (policyAccounts.value.length) out.allowedServiceAccounts = { value: unique(policyAccounts.value), from: policyAccounts.from };
  else if (r.restrictionServiceAccounts.value.length)
    out.allowedServiceAccounts = { value: unique(r.restrictionServiceAccounts.value), from: r.restrictionServiceAccounts.from };
  const names = unique(namespaces.value.filter((n) => !dnsLabelProblem(n)));
  if (names.length) out.allowedTargetNamespaces = { value: names, from: namespaces.from };
  return out;
}

/** GitRepoRestriction patterns match anywhere, Policy patterns the whole repo; an exact copy of the repo always matches. */
function checkRepo(repo: string, r: WorkspaceRestrictions, out: GitRepoReach): void {
  const lists = [
    { patterns: r.restrictionRepoPatterns, anchored: false },
    { patterns: r.policyRepoPatterns, anchored: true },
  ].filter((l) => l.patterns.value.length);
  if (!lists.length) return;
  const unreadable: string[] = [];
  for (const { patterns, anchored } of lists) {
    for (const p of patterns.value) {
      if (p === repo) return;
      const re = goRegExp(p, anchored);
      if (!re) unreadable.push(p);
      else if (re.test(repo)) return;
    }
  }
  const all = lists.map((l) => l.patterns);
  const patterns = JSON.stringify(all.flatMap((l) => l.value));
  if (unreadable.length) {
    out.unchecked.push({
      field: "spec.repo",
      text: `${JSON.stringify(repo)}: not checked against allowedRepoPatterns ${patterns} (${sources(...all)}): ${JSON.stringify(unreadable)} use Go syntax JavaScript does not read; if no pattern matches, Fleet refuses this GitRepo: check by hand`,
    });
  } else {
    out.refusals.push({ field: "spec.repo", text: `${JSON.stringify(repo)} matches none of allowedRepoPatterns ${patterns} (${sources(...all)})` });
  }
}

/**
 * A Go (RE2) pattern as a JavaScript RegExp, leading flags such as (?i) included; undefined when JavaScript
 * cannot read it. Unicode mode, whose strict syntax refuses what it would otherwise read differently from
 * Go (`\z`, `(?P<name>`): such a pattern is reported unchecked rather than judged wrongly.
 */
function goRegExp(pattern: string, anchored: boolean): RegExp | undefined {
  const flags = /^\(\?([ims]+)\)/.exec(pattern);
  const body = flags ? pattern.slice(flags[0].length) : pattern;
  const jsFlags = unique([...(flags?.[1] ?? ""), "u"]).join("");
  try {
    return new RegExp(anchored ? `^(?:${body})$` : body, jsFlags);
  } catch {
    return undefined;
  }
}
