/**
 * fleet.yaml `helm.valuesFrom` (issue 43): values read from a ConfigMap or Secret on the target cluster,
 * with the identity that deploys the pair, as Fleet's agent reads them before each install
 * (rancher/fleet v0.16.0 internal/helmdeployer/install.go getValues). The decisions, pure: which keys
 * a deployment reads (Fleet's defaults), whether it may (the GitRepo's namespaces, as for `lookup`,
 * lookup-scope.ts; the operator's bound), and what the answers give: the inputs fleet-render merges
 * over the values (tools/fleet-render/valuesfrom.go), the digest that makes a changed value a new
 * deploymentID, the values to redact, or the pair's failure in Fleet's words. The reads themselves are
 * core/desired/read-values-from.ts's.
 */
import { createHmac } from "node:crypto";
import * as YAML from "yaml";
import { DeploymentOptions } from "../bundles/types";
import { budgetedDocuments, yamlBudget } from "../base/yaml-documents";
import { FleetError } from "../base/errors";
import { sha256Hex } from "../base/hash";
import { positiveNumber } from "../base/operator-env";
import { LookupAnswer, LookupKey } from "../model/renderer-protocol";
import { LookupScope, lookupOutOfScope } from "./lookup-scope";
import { lookedUpSecrets, MIN_REDACTED_LENGTH, redactionOrder } from "./lookup-secrets";

/** Fleet's key when a reference names none (helmdeployer DefaultKey). */
export const DEFAULT_VALUES_KEY = "values.yaml";

/** One key to read, with Fleet's defaults applied: the namespace is the deployment's, the key values.yaml. */
export interface ValuesFromRef {
  kind: "ConfigMap" | "Secret";
  namespace: string;
  name: string;
  key: string;
}

/** What fleet-render merges over the values, in Fleet's order: the key's bytes (base64) and what it came from. */
export interface ValuesFromInput {
  from: string;
  data: string;
}

/** A deployment's valuesFrom, read and resolved. */
export interface ResolvedValuesFrom {
  inputs: ValuesFromInput[];
  /** Changes when a value read changes (and only then, for a Secret as long as it is the same object). */
  digest: string;
  /** A Secret was read: the deployment's objects are a secret. */
  secret: boolean;
  /** What its failures and warnings must not show (lookup-secrets.ts redactSecrets), longest first. */
  redact: string[];
}

type Where = { gitRepo: string; bundle: string; cluster: string; file?: string };

/** The operator's bound on the references one bundle deployment reads (PULUMI_FLEET_MAX_VALUES_FROM). */
export function maxValuesFrom(env: NodeJS.ProcessEnv = process.env): number {
  return Math.floor(positiveNumber(env, "PULUMI_FLEET_MAX_VALUES_FROM", 32));
}

/**
 * The keys a deployment reads, in Fleet's order: each entry's configMapKeyRef, then its secretKeyRef
 * ("merge secret last", getValues). `namespace` is the deployment's (fleet.yaml namespace, else
 * defaultNamespace, else default: Fleet's GetDeploymentNS).
 */
export function valuesFromRefs(options: DeploymentOptions, namespace: string): ValuesFromRef[] {
  return (options.helm?.valuesFrom ?? [])
    .flatMap((v) => [
      ...(v.configMapKeyRef ? [{ kind: "ConfigMap" as const, ref: v.configMapKeyRef }] : []),
      ...(v.secretKeyRef ? [{ kind: "Secret" as const, ref: v.secretKeyRef }] : []),
    ])
    .map(({ kind, ref }) => ({ kind, namespace: ref.namespace || namespace, name: ref.name, key: ref.key || DEFAULT_VALUES_KEY }));
}

/** How a reference is named in errors and to fleet-render. */
export function describeRef(ref: ValuesFromRef): string {
  return `${ref.kind === "ConfigMap" ? "configMapKeyRef" : "secretKeyRef"} ${ref.namespace}/${ref.name} key ${ref.key}`;
}

/** What the reader gets for a reference: the object, by name (never a list). */
export function lookupKeyOf(ref: ValuesFromRef): LookupKey {
  return { apiVersion: "v1", kind: ref.kind, namespace: ref.namespace, name: ref.name };
}

/**
 * Why the deployment's references may not be read, before anything is: over the bound, a reference
 * without a name (Fleet's client refuses it in the same words), or one outside the GitRepo's namespaces
 * (the rule `lookup` follows), naming the field and the stack setting that widens it.
 */
export function valuesFromProblem(refs: ValuesFromRef[], scope: LookupScope, where: Where, max = maxValuesFrom()): FleetError | undefined {
  const ctx = { ...where, field: "helm.valuesFrom" };
  if (refs.length > max) return new FleetError(`${refs.length} references, over the limit of ${max} per bundle deployment (PULUMI_FLEET_MAX_VALUES_FROM)`, ctx);
  for (const ref of refs) {
    if (!ref.name) return new FleetError(`${describeRef(ref)}: resource name may not be empty`, ctx);
    const why = lookupOutOfScope(lookupKeyOf(ref), scope);
    if (!why) continue;
    const own = scope.allowed?.length
      ? `namespace ${scope.namespace} or gitRepos[${where.gitRepo}].allowedTargetNamespaces (${scope.allowed.join(", ")})`
      : `namespace ${scope.namespace}`;
    return new FleetError(
      `${describeRef(ref)} ${why}, outside this GitRepo's namespaces: it is not read. valuesFrom reads only the deployment's ${own}; ` +
        `the stack setting gitRepos[${where.gitRepo}].allowedTargetNamespaces widens that (it also lets the GitRepo's objects into those namespaces)`,
      ctx,
    );
  }
  return undefined;
}

/**
 * The deployment's values from the answers read for its references (by lookup key), or its failure in
 * the words Fleet's agent fails with: the API's for an object that is missing or may not be read,
 * getValues' for a missing key.
 */
export function resolveValuesFrom(
  refs: ValuesFromRef[],
  answerOf: (key: LookupKey) => LookupAnswer | undefined,
  where: Where,
): ResolvedValuesFrom | FleetError {
  const ctx = { ...where, field: "helm.valuesFrom" };
  const inputs: ValuesFromInput[] = [];
  const digests: string[] = [];
  const secrets: LookupAnswer[] = [];
  const leaves = new Set<string>();
  for (const ref of refs) {
    const answer = answerOf(lookupKeyOf(ref));
    if (!answer) return new FleetError(`${describeRef(ref)}: not read`, ctx);
    if (answer.error) return new FleetError(`${describeRef(ref)}: ${answer.error}`, ctx);
    if (!answer.object) return new FleetError(`${describeRef(ref)}: ${ref.kind === "ConfigMap" ? "configmaps" : "secrets"} "${ref.name}" not found`, ctx);
    // Fleet reads ConfigMap.data (not binaryData) and Secret.data, the key's bytes.
    const value = (answer.object.data as Record<string, unknown> | undefined)?.[ref.key];
    if (typeof value !== "string") {
      return new FleetError(`key ${ref.key} is missing from ${ref.kind.toLowerCase()} ${ref.namespace}/${ref.name}, can't use it in valuesFrom`, ctx);
    }
    const data = ref.kind === "Secret" ? value : Buffer.from(value, "utf8").toString("base64");
    inputs.push({ from: describeRef(ref), data });
    if (ref.kind === "Secret") {
      secrets.push(answer);
      for (const leaf of scalarsOf(Buffer.from(value, "base64").toString("utf8"))) leaves.add(leaf);
      // Keyed by the Secret's uid, which the state never holds: the deploymentID (kept in clear) gives
      // nothing to test guessed values against. A Secret deleted and created again redeploys once.
      const uid = String((answer.object.metadata as Record<string, unknown> | undefined)?.uid ?? "");
      digests.push(createHmac("sha256", uid).update(data).digest("hex"));
    } else {
      digests.push(sha256Hex(data));
    }
  }
  const read = lookedUpSecrets(secrets);
  return {
    inputs,
    digest: sha256Hex(JSON.stringify([inputs.map((i) => i.from), digests])),
    secret: read.any,
    redact: redactionOrder([...read.values, ...leaves]),
  };
}

/** The deploymentID of a deployment whose valuesFrom gave `digest`: Fleet's (manifestID:options hash), the hash also over the values read. */
export function withValuesDigest(deploymentId: string, digest: string): string {
  const i = deploymentId.lastIndexOf(":");
  return `${deploymentId.slice(0, i + 1)}${sha256Hex(`${deploymentId.slice(i + 1)}:${digest}`)}`;
}

/** Leaves no one keeps secret, which would otherwise turn every `true` of the pair's messages into `[secret]`. */
const NOT_SECRET = new Set(["true", "false", "null"]);

/**
 * The scalar values of a Secret's YAML, each as written: a message may quote one leaf (a password)
 * without the rest of the text. Parsed only to redact (the values Fleet merges are fleet-render's).
 */
function scalarsOf(text: string): string[] {
  const out: string[] = [];
  try {
    // Within the runner's YAML budgets (a value over one is redacted whole, as text that is not YAML).
    for (const doc of budgetedDocuments(text, "valuesFrom", yamlBudget())) {
      YAML.visit(doc, {
        Scalar(key, node) {
          const source = (node as YAML.Scalar & { source?: string }).source ?? String(node.value);
          if (key !== "key" && source.length >= MIN_REDACTED_LENGTH && !NOT_SECRET.has(source.toLowerCase())) out.push(source);
        },
      });
    }
  } catch {
    // Not YAML: the whole text and its lines are redacted all the same (lookedUpSecrets).
  }
  return out;
}
