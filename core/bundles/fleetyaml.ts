/**
 * fleet.yaml / fleet.yml, with Fleet's field matching (Go's JSON decoding): a key that differs from a
 * field only in case is that field, and a key Fleet does not know is ignored; each is a warning naming
 * it (preview, PR summary, render), never silent. Values are checked strictly.
 */
import { Field } from "../config/reader";
import { FleetError } from "../base/errors";
import { readTargetCriteria, TargetCriteria } from "../config/target-criteria";
import { readSelector } from "../config/selector";
import { annotationsProblem, labelKeyProblem, labelValueProblem } from "../base/k8s-validation";
import {
  BundleTarget,
  DependsOn,
  DeploymentOptions,
  HelmOptions,
  IntOrString,
  PartitionSpec,
  RolloutStrategy,
  TargetCustomizationMode,
  ValuesFrom,
  ValuesKeyRef,
} from "./types";
import { limit } from "./rollout-limit";
import { parseYamlDocuments } from "../base/yaml-documents";
import { keysOf } from "../config/field-table";
import {
  BUNDLE_STATES,
  DEPENDS_ON_FIELDS,
  fieldsAt,
  FLEET_YAML_FIELDS,
  HELM_FIELDS,
  HELM_FLAGS,
  OPTION_FIELDS,
  refusedReason,
  ROLLOUT_FIELDS,
  TARGET_FIELDS,
} from "../config/fleetyaml-fields";

export interface FleetYaml {
  name?: string;
  labels: Record<string, string>;
  options: DeploymentOptions;
  paused: boolean;
  targets: BundleTarget[];
  targetCustomizations: BundleTarget[];
  targetCustomizationMode: TargetCustomizationMode;
  overrideTargets?: TargetCriteria[];
  dependsOn: DependsOn[];
  /** Present when fleet.yaml sets one (Fleet's BundleSpec field: not per target, not in the deploymentID). */
  rolloutStrategy?: RolloutStrategy;
  /** Settings given a non-default value that this product does not honour yet, each with what happens instead. */
  unhonoured: string[];
}

/**
 * Collects "<field>: <value> is not honoured yet: <what happens instead>" (or "is honoured differently:
 * <how>") while a fleet.yaml is read.
 */
type Unhonoured = (f: Field, instead: string, differently?: "differently") => void;

/** What happens here instead of each setting Fleet has and this product does not honour yet (issue 14). */
export const NOT_HONOURED = {
  correctDrift: "a drifted object whose patch fails is not deleted and recreated, and no failure history is kept",
  comparePatchOps: "only `remove` operations (and jsonPointers) are honoured: this operation is not applied before comparing",
  ignoreConditions: "Fleet's options merge drops a target's `ignore`, so it has no effect there; set it at the top level of fleet.yaml",
  acceptedStates:
    "the bundle waits, within the same update, until the other is applied and its workloads ready (a Pulumi dependency, Fleet's default [Ready]); it does not start earlier for the other states listed, and a failed dependency stops it",
  atomic: "the engine does not roll back a failed update",
  waitForJobs: "Jobs are awaited as the Kubernetes provider awaits them, whatever this says",
  maxHistory: "there are no Helm release revisions here",
} as const;

/**
 * Settings honoured with another meaning than Fleet's, said as visibly as those not honoured. helm.force:
 * Fleet's Helm replaces each object whole (a PUT) and fails on a change to an immutable field; here
 * the provider applies with fluxcd/pkg/ssa's Force, which deletes and recreates such an object.
 */
export const HONOURED_DIFFERENTLY = {
  force:
    "an object whose immutable fields changed is deleted and recreated (fluxcd/pkg/ssa's Force: destructive, its data and status go with it); Fleet's Helm instead replaces each object whole and fails on an immutable change",
} as const;

/** The documents of a fleet.yaml that count: one at most (Fleet would read the first and drop the rest). */
export function checkFleetYamlText(text: string, file: string): void {
  const docs = parseYamlDocuments(text, file).filter((d) => d !== null && d !== undefined);
  if (docs.length > 1) throw new FleetError("must contain a single YAML document", { file });
}

/** A fleet.yaml's data (as Fleet reads the YAML: core/bundles/goyaml.ts), validated strictly. */
export function parseFleetYaml(doc: unknown, file: string): FleetYaml {
  const matching = { warnings: [] as string[] };
  const root = new Field(doc ?? {}, "", { file }, matching).object(keysOf(FLEET_YAML_FIELDS));
  if (root.child("imageScans").present) root.child("imageScans").fail(`${refusedReason(FLEET_YAML_FIELDS, "imageScans")}; remove this field`);
  const unhonoured: string[] = [];
  const note: Unhonoured = (f, instead, differently) =>
    unhonoured.push(`${f.path}: ${JSON.stringify(f.value)} is ${differently ? "honoured differently" : "not honoured yet"}: ${instead}`);
  const fy: FleetYaml = {
    labels: readLabelMap(root.child("labels")),
    options: readOptions(root, note),
    paused: root.child("paused").bool(),
    targets: root
      .child("targets")
      .items()
      .map((t) => readBundleTarget(t, note)),
    targetCustomizations: root
      .child("targetCustomizations")
      .items()
      .map((t) => readBundleTarget(t, note)),
    targetCustomizationMode: root.child("targetCustomizationMode").oneOf(["FirstMatch", "AllMatches"] as const, "FirstMatch"),
    dependsOn: root
      .child("dependsOn")
      .items()
      .map((d) => readDependsOn(d, note)),
    unhonoured,
  };
  unhonoured.unshift(...matching.warnings);
  const name = root.child("name").optString();
  if (name) fy.name = name;
  if (root.child("overrideTargets").present)
    fy.overrideTargets = root
      .child("overrideTargets")
      .items()
      .map((t) => readTargetCriteria(t));
  if (root.child("rolloutStrategy").optMap()) fy.rolloutStrategy = readRollout(root.child("rolloutStrategy"));
  return fy;
}

/** rolloutStrategy (core/targeting/rollout.ts), each int-or-percentage checked as Fleet's limit reads it. */
function readRollout(f: Field): RolloutStrategy {
  f.object(keysOf(ROLLOUT_FIELDS));
  const intOrString = (x: Field): IntOrString | undefined => {
    if (!x.present || x.value === null) return undefined;
    if (typeof x.value === "number" && Number.isInteger(x.value)) return x.value;
    if (typeof x.value !== "string") x.fail("must be an integer or a percentage (ending with %)");
    try {
      limit(100, x.path, x.value as string);
    } catch (err) {
      x.fail((err as FleetError).reason);
    }
    return x.value as string;
  };
  const r: RolloutStrategy = {
    partitions: f
      .child("partitions")
      .items()
      .map((p) => {
        const criteria: PartitionSpec = readTargetCriteria(p, ["maxUnavailable"]);
        const max = intOrString(p.child("maxUnavailable"));
        return max === undefined ? criteria : { ...criteria, maxUnavailable: max };
      }),
  };
  for (const key of ["maxUnavailable", "maxUnavailablePartitions", "autoPartitionSize"] as const) {
    const v = intOrString(f.child(key));
    if (v !== undefined) r[key] = v;
  }
  for (const key of ["autoPartitionThreshold", "maxNew"] as const) {
    const v = f.child(key).optNumber();
    if (v !== undefined) r[key] = v;
  }
  return r;
}

function readBundleTarget(f: Field, note: Unhonoured): BundleTarget {
  f.object(keysOf(TARGET_FIELDS));
  const criteria = readTargetCriteria(f, [...keysOf(OPTION_FIELDS), "doNotDeploy"]);
  const target: BundleTarget = { ...criteria, ...readOptions(f, note, true), name: criteria.name ?? "" };
  if (f.child("doNotDeploy").bool()) target.doNotDeploy = true;
  return target;
}

function readDependsOn(f: Field, note: Unhonoured): DependsOn {
  f.object(keysOf(DEPENDS_ON_FIELDS));
  const d: DependsOn = {};
  const name = f.child("name").optString();
  if (name) d.name = name;
  const selector = readSelector(f.child("selector"));
  if (selector) d.selector = selector;
  if (!d.name && !d.selector) f.fail("needs a name or a selector");
  const states = f.child("acceptedStates").stringList();
  states.forEach((state, j) => {
    // Fleet refuses the same when it reads the fleet.yaml (bundlereader validateBundleRef).
    if (!(BUNDLE_STATES as readonly string[]).includes(state))
      f.child("acceptedStates")
        .index(j)
        .fail(`invalid state ${JSON.stringify(state)}, valid values are: ${BUNDLE_STATES.join(", ")}`);
  });
  if (states.length) {
    d.acceptedStates = states;
    // [Ready] is the default: the Pulumi dependency waits for the other bundle to be applied and ready.
    if (states.some((x) => x !== "Ready")) note(f.child("acceptedStates"), NOT_HONOURED.acceptedStates);
  }
  return d;
}

function readLabelMap(f: Field): Record<string, string> {
  const map = f.stringMap();
  for (const [k, v] of Object.entries(map)) {
    const kp = labelKeyProblem(k);
    if (kp) f.child(k).fail(`invalid label key: ${kp}`);
    const vp = labelValueProblem(v);
    if (vp) f.child(k).fail(`invalid label value ${JSON.stringify(v)}: ${vp}`);
  }
  return map;
}

/** Annotations as the API server validates them (core/base/k8s-validation.ts annotationsProblem), refused when fleet.yaml is read. */
function readAnnotationMap(f: Field): Record<string, string> {
  const map = f.stringMap();
  const problem = annotationsProblem(map);
  if (problem) f.fail(problem);
  return map;
}

function readOptions(f: Field, note: Unhonoured, inTarget = false): DeploymentOptions {
  const o: DeploymentOptions = {};
  // Fleet copies the named Secrets of the management cluster's workspace: content choosing the operator's secrets. Refused, never ignored.
  if (f.child("downstreamResources").present) {
    f.child("downstreamResources").fail(`${refusedReason(OPTION_FIELDS, "downstreamResources")}; remove this field`);
  }
  const str = (key: "defaultNamespace" | "namespace" | "serviceAccount") => {
    const v = f.child(key).optString();
    if (v) o[key] = v;
  };
  str("defaultNamespace");
  str("namespace");
  str("serviceAccount");
  if (f.child("namespaceLabels").present) o.namespaceLabels = readLabelMap(f.child("namespaceLabels"));
  if (f.child("namespaceAnnotations").present) o.namespaceAnnotations = readAnnotationMap(f.child("namespaceAnnotations"));
  for (const key of ["keepResources", "deleteNamespace", "deleteCRDResources"] as const) {
    if (f.child(key).bool()) o[key] = true;
  }
  const fsg = f.child("forceSyncGeneration").optNumber();
  if (fsg) {
    o.forceSyncGeneration = fsg;
  }
  if (f.child("helm").present) o.helm = readHelm(f.child("helm").object(keysOf(HELM_FIELDS)), note);
  if (f.child("kustomize").present) {
    const k = f.child("kustomize").object(keysOf(fieldsAt(OPTION_FIELDS, "kustomize")));
    o.kustomize = {};
    const dir = k.child("dir").optString();
    if (dir) o.kustomize.dir = dir;
  }
  if (f.child("yaml").present) {
    const y = f.child("yaml").object(keysOf(fieldsAt(OPTION_FIELDS, "yaml")));
    o.yaml = { overlays: y.child("overlays").stringList() };
  }
  if (f.child("diff").present) {
    const d = f.child("diff").object(keysOf(fieldsAt(OPTION_FIELDS, "diff")));
    o.diff = {
      comparePatches: d
        .child("comparePatches")
        .items()
        .map((p) => {
          checkComparePatch(p);
          return p.value as NonNullable<NonNullable<DeploymentOptions["diff"]>["comparePatches"]>[number];
        }),
    };
    // jsonPointers and remove operations are honoured (core/render/compare-patches.ts); other operations are warned.
    d.child("comparePatches")
      .items()
      .forEach((p) =>
        p
          .child("operations")
          .items()
          .forEach((op) => {
            if (op.child("op").optString() !== "remove") note(op.child("op"), NOT_HONOURED.comparePatchOps);
          }),
      );
  }
  if (f.child("correctDrift").present) {
    const c = f.child("correctDrift").object(keysOf(fieldsAt(OPTION_FIELDS, "correctDrift")));
    o.correctDrift = { enabled: c.child("enabled").bool(), force: c.child("force").bool(), keepFailHistory: c.child("keepFailHistory").bool() };
    // enabled is honoured by the operations' up (automation/operation/up.ts correctDrift); force and keepFailHistory are not.
    if (o.correctDrift.force) note(c.child("force"), NOT_HONOURED.correctDrift);
    if (o.correctDrift.keepFailHistory) note(c.child("keepFailHistory"), NOT_HONOURED.correctDrift);
  }
  if (f.child("ignore").present) {
    // Honoured by `status`'s readiness (core/renderer/readiness.ts), as Fleet's agent honours it; a target's is dropped by Fleet's merge.
    const conditions = f
      .child("ignore")
      .object(keysOf(fieldsAt(OPTION_FIELDS, "ignore")))
      .child("conditions");
    const list = conditions.items().map((c) => c.stringMap());
    if (list.length) {
      o.ignore = { conditions: list };
      if (inTarget) note(conditions, NOT_HONOURED.ignoreConditions);
    }
  }
  return o;
}

const VALUES_FROM_FIELDS = fieldsAt(HELM_FIELDS, "valuesFrom");
const COMPARE_PATCH_FIELDS = fieldsAt(fieldsAt(OPTION_FIELDS, "diff"), "comparePatches");

/** A comparePatches entry's types, as Go's decoding of Fleet's ComparePatch refuses a wrong one; kept as given. */
function checkComparePatch(p: Field): void {
  p.object(keysOf(COMPARE_PATCH_FIELDS));
  for (const key of ["apiVersion", "kind", "name", "namespace"]) p.child(key).optString();
  for (const pointer of p.child("jsonPointers").items()) pointer.optString();
  for (const op of p.child("operations").items()) {
    op.object(keysOf(fieldsAt(COMPARE_PATCH_FIELDS, "operations")));
    for (const key of ["op", "path", "value"]) op.child(key).optString();
  }
}

/** A helm.valuesFrom entry as Fleet's ValuesFrom decodes it; what it refers to is read per cluster (core/render/values-from.ts). */
function readValuesFrom(f: Field): ValuesFrom {
  f.object(keysOf(VALUES_FROM_FIELDS));
  const out: ValuesFrom = {};
  for (const kind of ["configMapKeyRef", "secretKeyRef"] as const) {
    if (!f.child(kind).present) continue;
    const r = f.child(kind).object(keysOf(fieldsAt(VALUES_FROM_FIELDS, kind)));
    const ref: ValuesKeyRef = { name: r.child("name").optString() ?? "" };
    for (const key of ["namespace", "key"] as const) {
      const v = r.child(key).optString();
      if (v) ref[key] = v;
    }
    out[kind] = ref;
  }
  return out;
}

function readHelm(f: Field, note: Unhonoured): HelmOptions {
  const h: HelmOptions = {};
  for (const key of ["chart", "repo", "version", "releaseName"] as const) {
    const v = f.child(key).optString();
    if (v) h[key] = v;
  }
  const values = f.child("values").optMap();
  if (values) h.values = values;
  const files = f.child("valuesFiles").stringList();
  if (files.length) h.valuesFiles = files;
  const from = f.child("valuesFrom").items().map(readValuesFrom);
  if (from.length) h.valuesFrom = from;
  if (f.child("templateValues").present) h.templateValues = f.child("templateValues").stringMap();
  // timeoutSeconds is honoured: the provider's readiness wait after an apply (core/desired/objects.ts timeoutSecondsOf).
  for (const key of ["timeoutSeconds", "maxHistory"] as const) {
    const v = f.child(key).optNumber();
    if (v !== undefined) h[key] = v;
    if (v && key === "maxHistory") note(f.child(key), NOT_HONOURED[key]);
  }
  for (const key of HELM_FLAGS) if (f.child(key).bool()) h[key] = true;
  // takeOwnership is honoured (core/desired/ownership.ts): false refuses an existing object this bundle does not own.
  for (const key of ["atomic", "waitForJobs"] as const) if (h[key]) note(f.child(key), NOT_HONOURED[key]);
  if (h.force) note(f.child("force"), HONOURED_DIFFERENTLY.force, "differently");
  if (h.releaseName) {
    if (h.releaseName.length > 53 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(h.releaseName)) {
      f.child("releaseName").fail(`invalid Helm release name ${JSON.stringify(h.releaseName)}: at most 53 lowercase alphanumeric characters, '-' or '.'`);
    }
  }
  return h;
}
