/**
 * fleet.yaml's fields (Fleet's FleetYAML: BundleSpec and its options), as one table: the reader
 * (fleetyaml.ts) takes each level's allowed keys from here, and schemas/fleet.yaml.schema.json is
 * generated from it (scripts/schemas.ts). Types are the reader's; rules a schema cannot say stay there.
 */
import { anyMap, bool, FieldTable, intOrString, listOf, num, obj, ref, refused, str, stringList, stringMap, tableOf } from "./field-table";
import { LABEL_SELECTOR_FIELDS, TARGET_CRITERIA_FIELDS } from "./common-fields";

/** Fleet's BundleState values (StateRank keys). */
export const BUNDLE_STATES = ["Ready", "NotReady", "Pending", "OutOfSync", "Modified", "WaitApplied", "ErrApplied"] as const;

/** helm's on/off settings: true when set, absent otherwise. */
export const HELM_FLAGS = [
  "force",
  "takeOwnership",
  "atomic",
  "waitForJobs",
  "disablePreProcess",
  "disableDNS",
  "skipSchemaValidation",
  "disableDependencyUpdate",
] as const;

/**
 * The helm flags a target customization turns on over the bundle's (core/targeting/merge.ts ORs them,
 * in this order); a customization's other flags are not merged.
 */
export const HELM_FLAGS_MERGED: readonly (typeof HELM_FLAGS)[number][] = ["force", "atomic", "takeOwnership", "disablePreProcess", "waitForJobs", "disableDNS"];

const keyRef = obj({ name: str("the object's name"), namespace: str("default: the deployment's namespace"), key: str("default: values.yaml") });

export const HELM_FIELDS: FieldTable = {
  chart: str("a chart: a path in the repository, a chart name in `repo`, an OCI or a tarball URL"),
  repo: str("the chart repository URL"),
  version: str("the chart version (a semver range for a repository chart)"),
  releaseName: str("the Helm release name (at most 53 characters)"),
  values: anyMap("Helm values"),
  valuesFiles: stringList("values files in the bundle directory"),
  valuesFrom: listOf(obj({ configMapKeyRef: keyRef, secretKeyRef: keyRef }), "values read from a ConfigMap or Secret of the target cluster"),
  templateValues: stringMap("values templated with the cluster's labels and values"),
  timeoutSeconds: num("how long the objects' create and update are awaited"),
  ...Object.fromEntries(HELM_FLAGS.map((k) => [k, bool()])),
  maxHistory: num("not honoured (there are no Helm release revisions here)"),
};

export const OPTION_FIELDS: FieldTable = {
  defaultNamespace: str("the namespace of objects that name none"),
  namespace: str("every namespaced object is forced into this namespace"),
  namespaceLabels: stringMap("labels of the created namespace"),
  namespaceAnnotations: stringMap("annotations of the created namespace"),
  serviceAccount: str("the service account the objects are applied as"),
  keepResources: bool("keep the objects when the bundle is removed"),
  deleteNamespace: bool("delete the namespace when the bundle is removed"),
  deleteCRDResources: bool("delete CRDs when the bundle is removed"),
  forceSyncGeneration: num("change it to force a redeployment"),
  helm: obj(HELM_FIELDS),
  kustomize: obj({ dir: str("the kustomization's directory") }),
  yaml: obj({ overlays: stringList("overlay directories under overlays/") }),
  diff: obj({
    comparePatches: listOf(
      obj({
        apiVersion: str(),
        kind: str(),
        name: str(),
        namespace: str(),
        jsonPointers: stringList("fields left out of the comparison"),
        operations: listOf(obj({ op: str(), path: str(), value: str() })),
      }),
    ),
  }),
  correctDrift: obj({ enabled: bool(), force: bool(), keepFailHistory: bool() }),
  ignore: obj({ conditions: listOf(stringMap(), "status conditions that do not count against readiness") }),
  downstreamResources: refused(
    "content cannot name the operator's Secrets here: the stack file hands them to the GitRepo's clusters (gitRepos[].downstreamResources, docs/configuration.md)",
  ),
};

export const TARGET_FIELDS: FieldTable = { ...TARGET_CRITERIA_FIELDS, doNotDeploy: bool("match, but deploy nothing"), ...OPTION_FIELDS };

export const ROLLOUT_FIELDS: FieldTable = {
  maxUnavailable: intOrString("an integer or a percentage"),
  maxUnavailablePartitions: intOrString("an integer or a percentage"),
  autoPartitionSize: intOrString("an integer or a percentage"),
  autoPartitionThreshold: num(),
  maxNew: num(),
  partitions: listOf(obj({ ...TARGET_CRITERIA_FIELDS, maxUnavailable: intOrString("an integer or a percentage") })),
};

export const DEPENDS_ON_FIELDS: FieldTable = {
  name: str("the bundle's name"),
  selector: ref("LabelSelector", LABEL_SELECTOR_FIELDS, "the bundles' labels"),
  acceptedStates: listOf(str(undefined, BUNDLE_STATES), "default [Ready]"),
};

export const FLEET_YAML_FIELDS: FieldTable = {
  ...OPTION_FIELDS,
  name: str("the bundle's name (default: from the GitRepo and the path)"),
  labels: stringMap("the bundle's labels"),
  paused: bool("deploy nothing new while true"),
  targets: listOf(obj(TARGET_FIELDS), "replaces the GitRepo's targets"),
  targetCustomizations: listOf(obj(TARGET_FIELDS), "options per matched cluster"),
  targetCustomizationMode: str("FirstMatch (default) or AllMatches", ["FirstMatch", "AllMatches"]),
  overrideTargets: listOf(obj(TARGET_CRITERIA_FIELDS), "replaces the GitRepo's targets (allowOverrideTargets)"),
  dependsOn: listOf(obj(DEPENDS_ON_FIELDS)),
  rolloutStrategy: obj(ROLLOUT_FIELDS),
  imageScans: refused("image scans are not supported by pulumi-fleet"),
};

const FLEET_BOOKKEEPING =
  'Fleet\'s own bookkeeping in its BundleSpec (filled by Fleet, marked jsonschema:"-" and left out of its published fleet.yaml schema since v0.16); warned as an unknown field';

/**
 * Fields of Fleet's fleet.yaml (its v0.16.0 Go types, its published schema) that this reader does not
 * read, and why: each is warned as an unknown field (test/unit/schemas.test.ts checks the list is whole).
 */
export const FLEET_FIELDS_NOT_READ: Readonly<Record<string, string>> = {
  createNamespace: "added to Fleet after v0.16 (rancher/fleet#5351); pulumi-fleet follows v0.16, which ignores it, so it is warned as an unknown field",
  ...Object.fromEntries(
    ["resources", "targetRestrictions", "contentsId", "helmOpOptions", "valuesHash", "overwrites", "allowedTargetNamespaceSelector"].map((k) => [
      k,
      FLEET_BOOKKEEPING,
    ]),
  ),
};

/** The table one level down, for the reader. */
export const fieldsAt = (table: FieldTable, key: string): FieldTable => tableOf(table[key]);

/** Why a refused field is refused (the reader's error). */
export function refusedReason(table: FieldTable, key: string): string {
  const t = table[key].type;
  if (t.kind !== "refused") throw new Error(`${key} is not a refused field`);
  return t.reason;
}
