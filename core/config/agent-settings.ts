/**
 * Agent settings as written in the stack file: global (`pulumi-fleet:agent`) and per cluster
 * (`clusters[].agent`), same fields. Validated with the file and field path in every error.
 */
import { Field, isPlainObject } from "./reader";
import { keysOf, tableOf } from "./field-table";
import { AGENT_FIELDS, PULL_POLICIES, TLS_MODES } from "./stack-fields";
import { dnsLabelProblem, dnsSubdomainProblem, labelKeyProblem, labelValueProblem } from "../base/k8s-validation";

export { PULL_POLICIES, TLS_MODES };

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface AgentSettings {
  /** false: no agent on the cluster (deploys never go through it); per cluster wins, default true. */
  enabled?: boolean;
  imageRepository?: string;
  /** Pins the agent image tag; without it the tag follows `fleetVersion`. */
  imageTag?: string;
  imagePullPolicy?: (typeof PULL_POLICIES)[number];
  /** Registry prefix for the image (Fleet's privateRepoURL / systemDefaultRegistry). */
  privateRepoURL?: string;
  pullSecrets?: string[];
  apiServerURL?: string;
  apiServerCA?: string;
  tlsMode?: (typeof TLS_MODES)[number];
  checkinInterval?: string;
  garbageCollectionInterval?: string;
  env?: Record<string, string>;
  tolerations?: Toleration[];
  affinity?: Record<string, unknown>;
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
  hostNetwork?: boolean;
  priorityClass?: { value: number; preemptionPolicy?: string };
  podDisruptionBudget?: { minAvailable?: number | string; maxUnavailable?: number | string };
  namespace?: string;
  labels?: Record<string, string>;
  /** Registration token for the agent (a secret). */
  token?: string;
}

const FIELDS = keysOf(AGENT_FIELDS);

const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i?|[mkMGTPE]|n|u)?$/;

export function parseAgentSettings(f: Field): AgentSettings {
  if (!f.present) return {};
  f.object(FIELDS);
  const s: AgentSettings = {};
  const enabled = f.child("enabled").optBool();
  if (enabled !== undefined) s.enabled = enabled;
  const str = (k: keyof AgentSettings & string) => {
    const v = f.child(k).optString();
    if (v !== undefined && v !== "") (s as Record<string, unknown>)[k] = v;
  };
  ["imageRepository", "imageTag", "privateRepoURL", "apiServerURL", "apiServerCA", "token"].forEach((k) => str(k as keyof AgentSettings & string));
  if (f.child("imagePullPolicy").present) s.imagePullPolicy = f.child("imagePullPolicy").oneOf(PULL_POLICIES);
  if (f.child("tlsMode").present) s.tlsMode = f.child("tlsMode").oneOf(TLS_MODES);
  for (const k of ["checkinInterval", "garbageCollectionInterval"] as const) {
    const v = f.child(k).optString();
    if (v === undefined) continue;
    if (!DURATION.test(v)) f.child(k).fail(`must be a Go duration such as 15m or 1h30m (got ${JSON.stringify(v)})`);
    s[k] = v;
  }
  if (s.apiServerURL && !/^https?:\/\/\S+$/.test(s.apiServerURL))
    f.child("apiServerURL").fail(`must be an http(s) URL (got ${JSON.stringify(s.apiServerURL)})`);
  if (s.apiServerCA && !s.apiServerCA.includes("-----BEGIN CERTIFICATE-----")) f.child("apiServerCA").fail("must be a PEM certificate bundle");
  if (f.child("pullSecrets").present) {
    s.pullSecrets = f.child("pullSecrets").stringList();
    s.pullSecrets.forEach((n, i) => {
      const p = dnsSubdomainProblem(n);
      if (p) f.child("pullSecrets").index(i).fail(`invalid secret name: ${p}`);
    });
  }
  if (f.child("env").present) {
    s.env = f.child("env").stringMap();
    for (const k of Object.keys(s.env)) if (!/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(k)) f.child("env").child(k).fail("invalid environment variable name");
  }
  if (f.child("tolerations").present) s.tolerations = f.child("tolerations").items().map(readToleration);
  const affinity = f.child("affinity").optMap();
  if (affinity) s.affinity = affinity;
  if (f.child("resources").present) {
    const r = f.child("resources").object(keysOf(tableOf(AGENT_FIELDS.resources)));
    s.resources = {};
    for (const k of ["limits", "requests"] as const) {
      if (!r.child(k).present) continue;
      const m = r.child(k).stringMap();
      for (const [name, q] of Object.entries(m))
        if (!QUANTITY.test(q))
          r.child(k)
            .child(name)
            .fail(`invalid quantity ${JSON.stringify(q)}`);
      s.resources[k] = m;
    }
  }
  const hostNetwork = f.child("hostNetwork").optBool();
  if (hostNetwork !== undefined) s.hostNetwork = hostNetwork;
  if (f.child("priorityClass").present) {
    const p = f.child("priorityClass").object(keysOf(tableOf(AGENT_FIELDS.priorityClass)));
    const value = p.child("value").optNumber();
    if (value === undefined || !Number.isInteger(value)) return p.child("value").fail("is required and must be an integer");
    const priorityClass: NonNullable<AgentSettings["priorityClass"]> = { value };
    if (p.child("preemptionPolicy").present) priorityClass.preemptionPolicy = p.child("preemptionPolicy").oneOf(["PreemptLowerPriority", "Never"]);
    s.priorityClass = priorityClass;
  }
  if (f.child("podDisruptionBudget").present) {
    const p = f.child("podDisruptionBudget").object(keysOf(tableOf(AGENT_FIELDS.podDisruptionBudget)));
    const min = intOrPercent(p.child("minAvailable"));
    const max = intOrPercent(p.child("maxUnavailable"));
    if ((min === undefined) === (max === undefined))
      p.fail('set exactly one of minAvailable and maxUnavailable (a count such as 1, or a percentage such as "50%")');
    s.podDisruptionBudget = min !== undefined ? { minAvailable: min } : { maxUnavailable: max };
  }
  const ns = f.child("namespace").optString();
  if (ns !== undefined) {
    const p = dnsLabelProblem(ns);
    if (p) f.child("namespace").fail(`invalid namespace: ${p}`);
    s.namespace = ns;
  }
  if (f.child("labels").present) {
    s.labels = f.child("labels").stringMap();
    for (const [k, v] of Object.entries(s.labels)) {
      const p = labelKeyProblem(k) ?? labelValueProblem(v);
      if (p)
        f.child("labels")
          .child(k)
          .fail(`invalid label ${JSON.stringify(k)}=${JSON.stringify(v)}: ${p}`);
    }
  }
  return s;
}

function readToleration(f: Field): Toleration {
  f.object(keysOf(tableOf(AGENT_FIELDS.tolerations)));
  const t: Toleration = {};
  for (const k of ["key", "value"] as const) {
    const v = f.child(k).optString();
    if (v !== undefined) t[k] = v;
  }
  if (f.child("operator").present) t.operator = f.child("operator").oneOf(["Exists", "Equal"]);
  if (f.child("effect").present) t.effect = f.child("effect").oneOf(["NoSchedule", "PreferNoSchedule", "NoExecute"]);
  const secs = f.child("tolerationSeconds").optNumber();
  if (secs !== undefined) t.tolerationSeconds = secs;
  if (!isPlainObject(f.value)) f.fail("must be a mapping");
  return t;
}

/**
 * Kubernetes' IntOrString as the PDB reads it: a count or a percentage. A count written as a string
 * ("1") becomes the number, because the API server rejects a string that is not a percentage, and so
 * both spellings give one effective configuration.
 */
function intOrPercent(f: Field): number | string | undefined {
  if (!f.present) return undefined;
  const v = f.value;
  if (typeof v === "number" && Number.isInteger(v) && v >= 0) return v;
  if (typeof v === "string" && /^\d+$/.test(v)) return Number(v);
  if (typeof v === "string" && /^\d+%$/.test(v)) return v;
  return f.fail(`must be a non-negative integer or a percentage such as "50%" (got ${JSON.stringify(v)})`);
}
