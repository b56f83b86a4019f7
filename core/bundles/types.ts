/** The bundle model: what a directory of a Fleet repository means, before any cluster is considered. */
import { LabelSelector } from "../model/selector";
import { TargetCriteria } from "../config/target-criteria";
import { FleetError } from "../base/errors";
import { K8sObject } from "../model/k8s-object";
import type { HELM_FLAGS } from "../config/fleetyaml-fields";

/** A key of a ConfigMap or Secret on the target cluster (Fleet's ConfigMapKeySelector / SecretKeySelector). */
export interface ValuesKeyRef {
  /** Fleet's `name` (required there; "" fails the pair with the API client's words when it is read). */
  name: string;
  /** Absent: the deployment's namespace. */
  namespace?: string;
  /** Absent: `values.yaml`. */
  key?: string;
}

/** One `helm.valuesFrom` entry: values read from the target cluster (core/render/values-from.ts). */
export interface ValuesFrom {
  configMapKeyRef?: ValuesKeyRef;
  secretKeyRef?: ValuesKeyRef;
}

/** helm's on/off settings (fleetyaml-fields.ts HELM_FLAGS): true when set, absent otherwise. */
export type HelmFlags = { [K in (typeof HELM_FLAGS)[number]]?: boolean };

export interface HelmOptions extends HelmFlags {
  chart?: string;
  repo?: string;
  version?: string;
  releaseName?: string;
  values?: Record<string, unknown>;
  valuesFiles?: string[];
  valuesFrom?: ValuesFrom[];
  templateValues?: Record<string, string>;
  timeoutSeconds?: number;
  maxHistory?: number;
}

export interface ComparePatch {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  jsonPointers?: string[];
  operations?: { op?: string; path?: string; value?: string }[];
}

/** Fleet's BundleDeploymentOptions: how a bundle is deployed, before and after per-cluster merging. */
export interface DeploymentOptions {
  defaultNamespace?: string;
  /** fleet.yaml `namespace` (Fleet's TargetNamespace): every object is forced into it. */
  namespace?: string;
  namespaceLabels?: Record<string, string>;
  namespaceAnnotations?: Record<string, string>;
  serviceAccount?: string;
  keepResources?: boolean;
  deleteNamespace?: boolean;
  deleteCRDResources?: boolean;
  forceSyncGeneration?: number;
  helm?: HelmOptions;
  kustomize?: { dir?: string };
  yaml?: { overlays?: string[] };
  diff?: { comparePatches?: ComparePatch[] };
  correctDrift?: { enabled?: boolean; force?: boolean; keepFailHistory?: boolean };
  /** Conditions whose every key/value matches one of these maps are left out when readiness is summarised. */
  ignore?: { conditions: Record<string, string>[] };
}

export interface BundleTarget extends TargetCriteria, DeploymentOptions {
  name: string;
  doNotDeploy?: boolean;
}

export interface DependsOn {
  name?: string;
  selector?: LabelSelector;
  acceptedStates?: string[];
}

export type TargetCustomizationMode = "FirstMatch" | "AllMatches";

export type BundleStyle =
  | { kind: "yaml" }
  | { kind: "kustomize"; dir: string }
  /** A chart inside the bundle (`path` relative to the bundle root) or a remote one (repo/chart/version). */
  | { kind: "helm"; path?: string; repo?: string; chart?: string; version?: string };

export interface BundleFile {
  /** Path relative to the bundle root, slash-separated. */
  name: string;
  content: string;
  /** "base64" when the file is not UTF-8 text (chart archives); the content is then base64. */
  encoding?: "base64";
}

/** Kubernetes' IntOrString as fleet.yaml gives it: a number, or a string ("25%", or digits). */
export type IntOrString = number | string;

export interface PartitionSpec extends TargetCriteria {
  maxUnavailable?: IntOrString;
}

/** fleet.yaml `rolloutStrategy`, as read (core/targeting/rollout.ts orders the clusters by it). */
export interface RolloutStrategy {
  maxUnavailable?: IntOrString;
  maxUnavailablePartitions?: IntOrString;
  autoPartitionSize?: IntOrString;
  autoPartitionThreshold?: number;
  maxNew?: number;
  partitions: PartitionSpec[];
}

/** A bundle's encrypted manifest, decrypted: its Secrets. */
export interface DecryptedFile {
  /** Path relative to the bundle root. */
  file: string;
  objects: K8sObject[];
}

export interface Bundle {
  name: string;
  gitRepo: string;
  /** Directory of the bundle relative to the repository root. */
  path: string;
  /** Absolute directory of the bundle in the checked-out tree. */
  dir: string;
  /** fleet.yaml or fleet.yml, when present (relative to the repository root). */
  fleetYaml?: string;
  labels: Record<string, string>;
  /** The bundle of a HelmOp (stack file helmOps): labelled as Fleet labels one (core/targeting/depends-on.ts). */
  helmOp?: true;
  options: DeploymentOptions;
  /** fleet.yaml targets and targetCustomizations, then GitRepo targets (Fleet's order). */
  targets: BundleTarget[];
  /** The GitRepo targets (or overrideTargets) as an allow-list; the matcher's restrictions. */
  restrictions: TargetCriteria[];
  /** fleet.yaml sets overrideTargets: `restrictions` are content's, checked against the GitRepo's targets (core/desired/reach.ts). */
  overrideTargets?: true;
  targetCustomizationMode: TargetCustomizationMode;
  dependsOn: DependsOn[];
  /** fleet.yaml rolloutStrategy, when set (core/targeting/rollout.ts). */
  rolloutStrategy?: RolloutStrategy;
  paused: boolean;
  style: BundleStyle;
  /** Every file of the bundle after Fleet's content rules, then the files of pulled charts (.chart/<sha256>/). */
  files: BundleFile[];
  /** Content address of the files: "s-" + sha256, as Fleet's manifestID. */
  manifestId: string;
  /** Shown in the preview and the PR summary: settings not honoured yet, credentials withheld from a chart. */
  warnings?: string[];
  /** Its SOPS-encrypted manifests, decrypted with the GitRepo's age key and taken out of `files` (sops.ts). */
  decrypted?: DecryptedFile[];
  /** Why its encrypted files cannot be decrypted: each of its deployments fails with it, alone. */
  decryptError?: FleetError;
}
