/**
 * What the importer's readers of Fleet objects share (core/import/fleet-export.ts, fleet-restrictions.ts, helm-ops.ts):
 * an object as read from the export, and the bookkeeping that makes every field either read or named
 * in a note.
 */
export type Obj = Record<string, unknown>;
export type FleetKind = "GitRepo" | "HelmOp" | "Cluster" | "ClusterGroup" | "GitRepoRestriction" | "Policy" | "Bundle";
export type FleetObject = { kind: FleetKind; name: string; namespace: string; raw: Obj };
/** Records that a field was not (or not wholly) carried over, and why: a comment in the file and a line on stderr. */
export type Note = (field: string, text: string) => void;

/** Set by kubectl or the API server, not by whoever wrote the object: never a setting to carry over. */
const SERVER_METADATA = [
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "managedFields",
  "selfLink",
  "finalizers",
  "ownerReferences",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
];
const KUBECTL_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Fields this importer reads are taken out of a copy; whatever is left gets a note. */
export class Fields {
  private readonly left: Obj;
  constructor(
    value: unknown,
    private readonly prefix: string,
    private readonly note: Note,
  ) {
    this.left = isObj(value) ? { ...value } : {};
  }
  take(key: string): unknown {
    const v = this.left[key];
    delete this.left[key];
    return v;
  }
  str(key: string): string | undefined {
    const v = this.take(key);
    return typeof v === "string" && v !== "" ? v : undefined;
  }
  /** A field with no counterpart here: its value is named with why, nothing is set. */
  unmapped(key: string, why: string): void {
    const v = this.take(key);
    if (v !== undefined && v !== "" && v !== false && v !== 0) this.note(`${this.prefix}${key}`, `${JSON.stringify(v)}: not mapped: ${why}`);
  }
  rest(what: string): void {
    for (const [k, v] of Object.entries(this.left)) this.note(`${this.prefix}${k}`, `${JSON.stringify(v)}: not mapped: ${what}`);
  }
}

/** metadata: labels (and a Cluster's annotations) are settings; server-set fields are not; anything else is named. */
export function readMetadata(
  o: FleetObject,
  note: Note,
  keep: ("labels" | "annotations")[],
): { labels: Record<string, string>; annotations: Record<string, string> } {
  const m = new Fields(o.raw.metadata, "metadata.", note);
  for (const k of SERVER_METADATA) m.take(k);
  const { [KUBECTL_ANNOTATION]: _applied, ...annotations } = (m.take("annotations") as Record<string, string> | undefined) ?? {};
  const labels = (m.take("labels") as Record<string, string> | undefined) ?? {};
  for (const [key, value] of [
    ["annotations", annotations],
    ["labels", labels],
  ] as const) {
    if (!keep.includes(key) && Object.keys(value).length)
      note(`metadata.${key}`, `${JSON.stringify(value)}: not mapped: a ${o.kind}'s ${key} have no meaning here`);
  }
  m.rest(`a ${o.kind}'s metadata has no meaning here`);
  return { labels: keep.includes("labels") ? labels : {}, annotations: keep.includes("annotations") ? annotations : {} };
}
