/**
 * Fleet's GitRepoRestrictions and Policies of one workspace, read as Fleet v0.16 enforces them
 * (gitops/reconciler/restrictions.go, policyrestrictions, reconciler/bundle_policy.go): they apply to
 * every GitRepo of their namespace; several are aggregated in name order, the first non-empty default
 * winning (a GitRepoRestriction's before a Policy's) and allow-lists unioned. Per GitRepo this gives the
 * stack settings that carry them, or the reasons Fleet refuses the GitRepo. What has no stack setting
 * is checked here once and named in a note. HelmOps answer to the Policies alone
 * (helmops/reconciler/restrictions.go, then the Bundle check): restrictHelmOp.
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
  /** A Policy's helmOp: read by Fleet's HelmOp reconciler alone. */
  helmDefaultServiceAccount: Sourced<string | undefined>;
  helmDefaultHelmSecretName: Sourced<string | undefined>;
  helmSecretNames: Sourced<string[]>;
  /** Anchored regular expressions, or exact values, as the Policy's gitRepo.allowedRepoPatterns. */
  helmRepoPatterns: Sourced<string[]>;
  helmChartPatterns: Sourced<string[]>;
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
    helmDefaultServiceAccount: none(),
    helmDefaultHelmSecretName: none(),
    helmSecretNames: list(),
    helmRepoPatterns: list(),
    helmChartPatterns: list(),
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
const CHECKED_ONCE_HELM =
  "checked at import (a HelmOp it refuses is not imported); not kept: the stack has no such setting, so a HelmOp edited later is not checked";

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
      `true: checked at import (a GitRepo or HelmOp it refuses is not imported); not kept: the stack has no such setting, so one edited later is not checked (without serviceAccount, a bundle deploys as fleet-default where that account exists, else with the stack's own credentials)`,
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
  const helm = new Fields(f.take("helmOp"), "helmOp.", note);
  firstDefault(r.helmDefaultServiceAccount, helm.str("defaultServiceAccount"), o);
  firstDefault(r.helmDefaultHelmSecretName, helm.str("defaultHelmSecretName"), o);
  const helmSecretNames = strings(helm, "allowedHelmSecretNames", o, source);
  add(r.helmSecretNames, helmSecretNames, o);
  if (helmSecretNames.length)
    note(
      "helmOp.allowedHelmSecretNames",
      `${JSON.stringify(helmSecretNames)}: ${CHECKED_ONCE_HELM}; Helm credentials are each HelmOp's helmSecret here (Pulumi secrets), not Secrets by name`,
    );
  for (const [key, into] of [
    ["allowedHelmRepoPatterns", r.helmRepoPatterns],
    ["allowedChartPatterns", r.helmChartPatterns],
  ] as const) {
    const patterns = strings(helm, key, o, source);
    add(into, patterns, o);
    if (patterns.length) note(`helmOp.${key}`, `${JSON.stringify(patterns)}: ${CHECKED_ONCE_HELM} (each HelmOp's allowedChartURLs bounds what it pulls)`);
  }
  helm.rest("not known to this importer");
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

/** What the Policies make of one HelmOp: settings to write, or why Fleet refuses it. */
export interface HelmOpReach {
  /** Fleet's reasons, each by the HelmOp field it is about; any reason means Fleet deploys nothing from it. */
  refusals: { field: string; text: string }[];
  /** Checks the importer could not make (a pattern JavaScript does not read): named, the HelmOp imported. */
  unchecked: { field: string; text: string }[];
  serviceAccount?: Sourced<string>;
  helmSecretName?: Sourced<string>;
  allowedServiceAccounts?: Sourced<string[]>;
}

/**
 * The Policies applied to one HelmOp's spec as Fleet's AuthorizeAndAssignDefaults does (the Policy's
 * helmOp defaults first, then requireServiceAccount, allowedServiceAccounts, allowedHelmSecretNames,
 * allowedHelmRepoPatterns and allowedChartPatterns), then Fleet's Bundle check (each target's own
 * serviceAccount against allowedServiceAccounts). GitRepoRestrictions do not apply to HelmOps. Every
 * refusal is listed, not only Fleet's first. `targets`: each target's name as Fleet names it.
 */
export function restrictHelmOp(
  r: WorkspaceRestrictions,
  spec: { serviceAccount?: string; helmSecretName?: string; repo?: string; chart?: string; targets: { name: string; serviceAccount?: string }[] },
): HelmOpReach {
  const out: HelmOpReach = { refusals: [], unchecked: [] };
  const refuse = (field: string, why: string, ...from: Sourced<unknown>[]) => out.refusals.push({ field, text: `${why} (${sources(...from)})` });
  const defaulted = (own: string | undefined, d: Sourced<string | undefined>): Sourced<string> | undefined =>
    own ? { value: own, from: [] } : d.value ? { value: d.value, from: d.from } : undefined;
  out.serviceAccount = defaulted(spec.serviceAccount, r.helmDefaultServiceAccount);
  out.helmSecretName = defaulted(spec.helmSecretName, r.helmDefaultHelmSecretName);
  const serviceAccount = out.serviceAccount?.value;

  if (r.requireServiceAccount.value && !serviceAccount)
    refuse("spec.serviceAccount", "absent, no helmOp.defaultServiceAccount, and requireServiceAccount is set", r.requireServiceAccount);
  // Unlike a GitRepo's, a HelmOp's default is checked too: Fleet assigns it, then checks the result.
  const accounts = r.policyServiceAccounts;
  const accountList = JSON.stringify(unique(accounts.value));
  if (serviceAccount && accounts.value.length && !accounts.value.includes(serviceAccount)) {
    const given = out.serviceAccount!.from.length ? ` (the Policies' helmOp.defaultServiceAccount)` : "";
    refuse(
      "spec.serviceAccount",
      `${JSON.stringify(serviceAccount)}${given} is not in the Policies' allowedServiceAccounts ${accountList}`,
      accounts,
      out.serviceAccount!,
    );
  }
  const secret = out.helmSecretName?.value;
  const secretNames = r.helmSecretNames;
  if (secret && secretNames.value.length && !secretNames.value.includes(secret)) {
    const given = out.helmSecretName!.from.length ? ` (the Policies' helmOp.defaultHelmSecretName)` : "";
    refuse(
      "spec.helmSecretName",
      `${JSON.stringify(secret)}${given} is not in allowedHelmSecretNames ${JSON.stringify(unique(secretNames.value))}`,
      secretNames,
      out.helmSecretName!,
    );
  }
  checkAnchored("spec.helm.repo", spec.repo, r.helmRepoPatterns, "allowedHelmRepoPatterns", out);
  checkAnchored("spec.helm.chart", spec.chart, r.helmChartPatterns, "allowedChartPatterns", out);
  // Fleet's Bundle check: a target's own account bypasses the HelmOp's, so each is checked.
  if (accounts.value.length)
    spec.targets.forEach((t, i) => {
      if (t.serviceAccount && !accounts.value.includes(t.serviceAccount))
        refuse(
          `spec.targets[${i}].serviceAccount`,
          `${JSON.stringify(t.serviceAccount)} of target ${t.name} is not in the Policies' allowedServiceAccounts ${accountList}, so Fleet refuses the HelmOp's Bundle`,
          accounts,
        );
    });
  if (accounts.value.length) out.allowedServiceAccounts = { value: unique(accounts.value), from: accounts.from };
  return out;
}

/**
 * Fleet's IsAllowedByRegex: an empty value passes; each pattern in order either equals the value,
 * matches all of it (Go syntax), or fails to compile, which refuses the value. A pattern JavaScript
 * cannot read stops the check, named unchecked: Go may read it and match, or refuse it.
 */
function checkAnchored(field: string, value: string | undefined, patterns: Sourced<string[]>, key: string, out: HelmOpReach): void {
  if (!value || !patterns.value.length) return;
  for (const p of patterns.value) {
    if (p === value) return;
    const re = goRegExp(p, true);
    if (!re) {
      out.unchecked.push({
        field,
        text: `${JSON.stringify(value)}: not checked against ${key} ${JSON.stringify(patterns.value)} (${sources(patterns)}): ${JSON.stringify(p)} uses Go syntax JavaScript does not read; if Go cannot compile it or no pattern matches, Fleet refuses this HelmOp: check by hand`,
      });
      return;
    }
    if (re.test(value)) return;
  }
  out.refusals.push({ field, text: `${JSON.stringify(value)} matches none of ${key} ${JSON.stringify(patterns.value)} (${sources(patterns)})` });
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
