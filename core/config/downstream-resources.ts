/**
 * `gitRepos[].downstreamResources`: Secrets the operator hands to every cluster a GitRepo targets, their
 * values held in the stack's encrypted config. Named after Fleet's `downstreamResources` (a bundle option
 * that copies Secrets and ConfigMaps of the GitRepo's namespace on the management cluster into each
 * bundle deployment's namespace downstream), but the operator's, not content's: the stack names the
 * values and the namespace, and the namespace must be one this GitRepo may deploy into and no other
 * GitRepo's (docs/fleet-compatibility.md says where it differs from Fleet).
 */
import { Field, isPlainObject } from "./reader";
import { keysOf } from "./field-table";
import { DOWNSTREAM_SECRET_FIELDS } from "./stack-fields";
import { dnsLabelProblem, dnsSubdomainProblem, labelKeyProblem, labelValueProblem } from "../base/k8s-validation";

/** One Secret for every cluster the GitRepo targets. */
export interface DownstreamSecret {
  name: string;
  namespace: string;
  type: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /**
   * Key to value, as bytes in base64 (`stringData` is encoded here). A value given as `{secure: ...}` in
   * a stack file read without the engine (plan, render) is unknown: its key is in `keys` only.
   */
  data: Record<string, string>;
  /** Every key, known value or not (what the type's required keys are checked against). */
  keys: string[];
}

/** The subset of a GitRepo's fields the namespace rule reads. */
export interface NamespaceBounds {
  name: string;
  targetNamespace?: string;
  allowedTargetNamespaces?: string[];
  downstreamResources?: DownstreamSecret[];
}

/** Kubernetes' rule for a Secret's keys (IsConfigMapKey). */
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

/** Keys the API server requires for the built-in Secret types (core validation), checked up front so a typo never fails a cluster's setup. */
const REQUIRED_KEYS: Record<string, string[][]> = {
  "kubernetes.io/dockerconfigjson": [[".dockerconfigjson"]],
  "kubernetes.io/dockercfg": [[".dockercfg"]],
  "kubernetes.io/tls": [["tls.crt"], ["tls.key"]],
  "kubernetes.io/ssh-auth": [["ssh-privatekey"]],
  "kubernetes.io/basic-auth": [["username", "password"]],
};

export function readDownstreamResources(
  f: Field,
  repo: { targetNamespace?: string; allowedTargetNamespaces?: string[] },
  namespaceAllowed: (ns: string, allowed: readonly string[]) => boolean,
): DownstreamSecret[] {
  const out = f.items().map((item) => readSecretEntry(item, repo, namespaceAllowed));
  const seen = new Map<string, number>();
  out.forEach((s, i) => {
    const id = `${s.namespace}/${s.name}`;
    const first = seen.get(id);
    if (first !== undefined) f.index(i).fail(`Secret ${id} is also at index ${first}`);
    seen.set(id, i);
  });
  return out;
}

function readSecretEntry(
  f: Field,
  repo: { targetNamespace?: string; allowedTargetNamespaces?: string[] },
  namespaceAllowed: (ns: string, allowed: readonly string[]) => boolean,
): DownstreamSecret {
  f.object(keysOf(DOWNSTREAM_SECRET_FIELDS));
  // Fleet matches the kind without regard to case.
  const kind = f.child("kind").string();
  if (kind.toLowerCase() === "configmap") {
    f.child("kind").fail(
      "ConfigMap is not offered here (Fleet copies ConfigMaps too): a ConfigMap holds no secret, so commit it with the bundle's content, or make it a Secret",
    );
  }
  if (kind.toLowerCase() !== "secret") f.child("kind").fail(`must be Secret (got ${JSON.stringify(kind)})`);
  const name = f.child("name").string();
  const nameProblem = dnsSubdomainProblem(name);
  if (nameProblem) f.child("name").fail(`invalid Secret name ${JSON.stringify(name)}: ${nameProblem}`);
  const namespace = f.child("namespace").optString() ?? repo.targetNamespace;
  if (!namespace)
    return f
      .child("namespace")
      .fail("is required when the GitRepo has no targetNamespace: the namespace this Secret lands in on each cluster the GitRepo targets");
  const nsProblem = dnsLabelProblem(namespace);
  if (nsProblem) f.child("namespace").fail(`invalid namespace ${JSON.stringify(namespace)}: ${nsProblem}`);
  if (repo.allowedTargetNamespaces) {
    if (!namespaceAllowed(namespace, repo.allowedTargetNamespaces)) {
      f.child("namespace").fail(
        `${JSON.stringify(namespace)} is not in this GitRepo's allowedTargetNamespaces (${repo.allowedTargetNamespaces.join(", ")}): a GitRepo's Secrets land only where it may deploy`,
      );
    }
  } else if (repo.targetNamespace && namespace !== repo.targetNamespace) {
    f.child("namespace").fail(
      `${JSON.stringify(namespace)} is not this GitRepo's targetNamespace ${JSON.stringify(repo.targetNamespace)}: a GitRepo's Secrets land only where it deploys (list more in allowedTargetNamespaces)`,
    );
  }
  const type = f.child("type").optString() ?? "Opaque";
  if (type === "kubernetes.io/service-account-token") f.child("type").fail("a service account token is issued by the cluster, not handed to it");
  const data: Record<string, string> = {};
  const keys: string[] = [];
  for (const field of ["data", "stringData"] as const) {
    const map = f.child(field);
    if (!map.present) continue;
    if (!isPlainObject(map.value)) return map.fail("must be a mapping of key to value (each a Pulumi secret)");
    for (const key of Object.keys(map.value)) {
      const entry = map.child(key);
      if (!SECRET_KEY.test(key) || key.length > 253 || key === "." || key === "..")
        entry.fail("invalid key: a Secret's keys are letters, digits, '-', '_' and '.' (at most 253), and not . or ..");
      if (keys.includes(key)) entry.fail("is set in both data and stringData");
      keys.push(key);
      const value = secretValue(entry);
      if (value === undefined) continue;
      if (field === "data" && !isBase64(value)) entry.fail("is not base64 (data holds base64; put the value itself under stringData)");
      data[key] = field === "data" ? value : Buffer.from(value, "utf8").toString("base64");
    }
  }
  for (const alternatives of REQUIRED_KEYS[type] ?? []) {
    if (!alternatives.some((k) => keys.includes(k))) f.fail(`a Secret of type ${type} needs the key ${alternatives.join(" or ")} (in data or stringData)`);
  }
  return {
    name,
    namespace,
    type,
    labels: readStrings(f.child("labels"), true),
    annotations: readStrings(f.child("annotations"), false),
    data,
    keys: keys.sort(),
  };
}

/** A value: a plain string once the engine decrypted the config, `{secure: ...}` (unknown here) in a stack file read directly. */
function secretValue(f: Field): string | undefined {
  if (isPlainObject(f.value) && typeof f.value.secure === "string") return undefined;
  if (typeof f.value !== "string") f.fail("must be a string: set it with `pulumi config set --secret --path '<key>'` so the stack file holds it encrypted");
  return f.value;
}

function isBase64(v: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(v) && v.length % 4 === 0;
}

function readStrings(f: Field, label: boolean): Record<string, string> {
  const map = f.stringMap();
  for (const [k, v] of Object.entries(map)) {
    const keyProblem = labelKeyProblem(k);
    if (keyProblem) f.child(k).fail(`invalid ${label ? "label" : "annotation"} key: ${keyProblem}`);
    const valueProblem = label ? labelValueProblem(v) : undefined;
    if (valueProblem) f.child(k).fail(`invalid label value ${JSON.stringify(v)}: ${valueProblem}`);
  }
  return map;
}

/**
 * A GitRepo's Secrets never land in another GitRepo's namespace: its targetNamespace, one its
 * allowedTargetNamespaces match, or where its own downstreamResources land. Otherwise that GitRepo's
 * content could deploy a pod there that mounts the Secret. (A GitRepo with neither targetNamespace nor
 * allowedTargetNamespaces may deploy anywhere, as in Fleet: docs/security.md says how to bound it.)
 */
export function checkDownstreamNamespaces(list: Field, repos: NamespaceBounds[], namespaceAllowed: (ns: string, allowed: readonly string[]) => boolean): void {
  repos.forEach((repo, r) => {
    (repo.downstreamResources ?? []).forEach((s, i) => {
      for (const other of repos) {
        if (other === repo) continue;
        const why =
          other.targetNamespace === s.namespace
            ? "its targetNamespace"
            : other.allowedTargetNamespaces && namespaceAllowed(s.namespace, other.allowedTargetNamespaces)
              ? `its allowedTargetNamespaces (${other.allowedTargetNamespaces.join(", ")})`
              : other.downstreamResources?.some((o) => o.namespace === s.namespace)
                ? "its own downstreamResources land there"
                : undefined;
        if (why) {
          list
            .index(r)
            .child("downstreamResources")
            .index(i)
            .child("namespace")
            .fail(
              `${JSON.stringify(s.namespace)} is GitRepo ${other.name}'s namespace (${why}): this GitRepo's Secrets would be readable by that GitRepo's content; give each GitRepo a namespace of its own`,
            );
        }
      }
    });
  });
}
