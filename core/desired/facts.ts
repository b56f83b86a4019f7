/**
 * Everything the desired state needs from outside the process: rendering (fleet-render's sandbox),
 * reading and deleting objects on clusters, impersonation, the stack's last outputs and its crash
 * journal. Core reaches them only through this interface, so each decision is tested with a fake;
 * liveFacts() is the real one.
 */
import { runRenderer } from "../renderer/fleet-render";
import {
  DiscoveryJob,
  DiscoveryResult,
  ImpersonateJob,
  ImpersonateResult,
  LookupJob,
  LookupResult,
  OwnersJob,
  OwnersResult,
  Renderer,
} from "../model/renderer-protocol";
import { JournalEntry } from "./journal";
import { K8sObject } from "../model/k8s-object";
import { PairSpec } from "../model/pair";
import { PreviousDeployment } from "./previous";

export interface Facts {
  /** Runs content jobs in fleet-render's sandbox: YAML as Fleet reads it, chart pulls, helm values, renders. */
  render: Renderer;
  /** Reads objects' owners on clusters, or deletes them when a job says `delete` (client-go, the stack's credentials). */
  objects(jobs: OwnersJob[]): Promise<Record<string, OwnersResult>>;
  /** Kubeconfigs acting as a user (serviceAccount impersonation). */
  impersonate(jobs: ImpersonateJob[]): Promise<Record<string, ImpersonateResult>>;
  /**
   * The ambient kubeconfig (KUBECONFIG, else ~/.kube/config) as kubectl reads it, reduced to one
   * context (the given one, else the current one) with its files inlined.
   */
  ambientKubeconfig(jobs: { id: string; context: string }[]): Promise<Record<string, ImpersonateResult>>;
  /** Each live cluster's version and served API versions: what charts see as `.Capabilities`. */
  discovery(jobs: DiscoveryJob[]): Promise<Record<string, DiscoveryResult>>;
  /** Reads what templates asked `lookup` for, on their cluster, read-only (Helm's lookup on Fleet's agent). */
  lookup(jobs: LookupJob[]): Promise<Record<string, LookupResult>>;
  /** What this stack's last update deployed; undefined for a new stack. */
  previous(): Promise<PreviousDeployment | undefined>;
  /** The crash journal, given by the operations' `up` when the state is written once at the end. */
  journal?: JournalHooks;
  /**
   * Per bundle deployment (deploymentKey), the objects the stack's state holds: given by the operations,
   * which read the state before the engine runs; absent under a plain `pulumi up`.
   */
  deployed?: ReadonlyMap<string, DeployedBundle>;
}

/** A bundle deployment as the state holds it: the deploymentID all its objects were applied at, and those objects. */
export interface DeployedBundle {
  appliedDeploymentId?: string;
  objects: DeployedObject[];
  /** Its BundleDeployment's last inputs; absent when an earlier version deployed it as one resource per object. */
  spec?: PairSpec;
  /** The user its objects were applied as (serviceAccount); absent: the cluster's own provider. */
  account?: string;
  /** The namespaces its cluster created that its objects are in, as registered. */
  namespaces?: DeployedNamespace[];
  /** Its objects are a secret in the state (its lookups read a Secret): registered again, they stay one. */
  secret?: true;
}

/** A namespace a Cluster created, as the state holds it. */
export interface DeployedNamespace {
  /** Logical name: "<cluster>/<namespace>". */
  name: string;
  metadata: { name: string; labels: Record<string, string>; annotations?: Record<string, string> };
  retainOnDelete: boolean;
}

/** An object as the state holds it: its last registered inputs (secrets in the clear) and why a prune leaves it (absent: deleted). */
export interface DeployedObject {
  manifest: K8sObject;
  retain?: string;
  /** A chart's crds/ object its pair only creates (PairObject.createOnly). */
  createOnly?: true;
}

export interface JournalHooks {
  list(): Promise<{ key: string; entry: JournalEntry }[]>;
  add(entry: JournalEntry): Promise<string>;
  remove(keys: string[]): Promise<void>;
  /** identityOf every Kubernetes object in the stack's state (read only when the journal has entries). */
  stateIdentities(): Promise<Set<string>>;
  /** Who writes this update's entry. */
  writer: string;
  /** Told the key of this update's entry (removed once the engine has written the state). */
  onRecorded(key: string): void;
  /** Where the sweep's reports go (the operations' warnings, shown even with --quiet). */
  warn(message: string): void;
}

/** Reading and deleting objects on live clusters through fleet-render (no sandbox: cluster jobs). */
export const readObjects = async (jobs: OwnersJob[]): Promise<Record<string, OwnersResult>> => (await runRenderer({ owners: jobs })).owners;

/** Kubeconfigs acting as a user, made by fleet-render from the cluster's (client-go's loader). */
export const impersonate = async (jobs: ImpersonateJob[]): Promise<Record<string, ImpersonateResult>> => (await runRenderer({ impersonate: jobs })).impersonate;

/** The real facts: fleet-render for rendering and clusters; `previous` and `journal` from the caller. */
export function liveFacts(
  previous: () => Promise<PreviousDeployment | undefined>,
  journal?: JournalHooks,
  deployed?: ReadonlyMap<string, DeployedBundle>,
): Facts {
  return {
    render: runRenderer,
    objects: readObjects,
    impersonate,
    ambientKubeconfig: (jobs) => impersonate(jobs.map((j) => ({ ...j, kubeconfig: "", as: "" }))),
    discovery: async (jobs) => (await runRenderer({ discovery: jobs })).discovery,
    lookup: async (jobs) => (await runRenderer({ lookupReads: jobs })).lookupReads,
    previous,
    ...(journal ? { journal } : {}),
    ...(deployed ? { deployed } : {}),
  };
}

/**
 * Facts for computing the desired state without the engine or any cluster (`npm run plan -- --desired`):
 * the real renderer; no last outputs (as for a new stack); the clusters are left out by the caller, so
 * no owner and no fleet-default account is read; an impersonating kubeconfig is only named.
 */
export function offlineFacts(): Facts {
  return {
    render: runRenderer,
    objects: async (jobs) => Object.fromEntries(jobs.map((j) => [j.id, { error: "clusters are not read without the engine" }])),
    impersonate: async (jobs) => Object.fromEntries(jobs.map((j) => [j.id, { kubeconfig: `(the cluster's kubeconfig acting as ${j.as}, made at up)` }])),
    discovery: async (jobs) => Object.fromEntries(jobs.map((j) => [j.id, { error: "clusters are not read without the engine" }])),
    ambientKubeconfig: async (jobs) => Object.fromEntries(jobs.map((j) => [j.id, { kubeconfig: "(the ambient kubeconfig, read at up)" }])),
    lookup: async (jobs) => Object.fromEntries(jobs.map((j) => [j.id, { error: "clusters are not read without the engine" }])),
    previous: async () => undefined,
  };
}
