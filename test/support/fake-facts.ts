/**
 * Facts (core/desired/facts.ts) for unit tests of the desired state: the real renderer (a pure
 * computation in its sandbox) unless replaced, and no cluster: a test that reaches one without saying
 * so fails, naming the call. Every call is recorded. A test's own answers are plain functions; the
 * facts return them as promises, as the real ones do.
 */
import { Facts, JournalHooks } from "../../core/desired/facts";
import { PreviousDeployment } from "../../core/desired/previous";
import { runRenderer } from "../../core/renderer/fleet-render";
import {
  Capabilities,
  DiscoveryJob,
  DiscoveryResult,
  ImpersonateJob,
  ImpersonateResult,
  LookupJob,
  LookupResult,
  OwnersJob,
  OwnersResult,
} from "../../core/model/renderer-protocol";

export interface FakeFacts extends Facts {
  calls: { objects: OwnersJob[][]; impersonate: ImpersonateJob[][]; discovery: DiscoveryJob[][] };
}

/** A test's answer to a batch of jobs, by job id (the real facts' answers, already or eventually). */
type Answer<J, R> = (jobs: J[]) => Record<string, R> | Promise<Record<string, R>>;

export function fakeFacts(
  over: {
    previous?: PreviousDeployment;
    objects?: Answer<OwnersJob, OwnersResult>;
    impersonate?: Answer<ImpersonateJob, ImpersonateResult>;
    discovery?: Answer<DiscoveryJob, DiscoveryResult>;
    ambientKubeconfig?: Answer<{ id: string; context: string }, ImpersonateResult>;
    lookup?: Answer<LookupJob, LookupResult>;
    journal?: JournalHooks;
  } = {},
): FakeFacts {
  const calls: FakeFacts["calls"] = { objects: [], impersonate: [], discovery: [] };
  return {
    calls,
    render: runRenderer,
    previous: async () => over.previous,
    objects: async (jobs) => {
      calls.objects.push(jobs);
      if (!over.objects) throw new Error(`this test has no cluster, but objects were asked of ${jobs.map((j) => j.id).join(", ")}`);
      return over.objects(jobs);
    },
    impersonate: async (jobs) => {
      calls.impersonate.push(jobs);
      if (!over.impersonate) throw new Error(`this test has no cluster, but impersonation was asked for ${jobs.map((j) => j.as).join(", ")}`);
      return over.impersonate(jobs);
    },
    lookup: async (jobs) => {
      if (!over.lookup) throw new Error(`this test has no cluster, but lookups were asked of ${jobs.map((j) => j.id).join(", ")}`);
      return over.lookup(jobs);
    },
    ambientKubeconfig: async (jobs) => {
      if (!over.ambientKubeconfig) throw new Error(`this test has no ambient kubeconfig, but it was asked for ${jobs.map((j) => j.id).join(", ")}`);
      return over.ambientKubeconfig(jobs);
    },
    discovery: async (jobs) => {
      calls.discovery.push(jobs);
      if (!over.discovery) throw new Error(`this test has no cluster, but discovery was asked of ${jobs.map((j) => j.id).join(", ")}`);
      return over.discovery(jobs);
    },
    ...(over.journal ? { journal: over.journal } : {}),
  };
}

/** Every cluster answers discovery with these capabilities (a v1.36 cluster serving only core v1 by default). */
export const discovered =
  (caps: Capabilities = { kubeVersion: { version: "v1.36.3", major: "1", minor: "36" }, apiVersions: ["v1"] }) =>
  (jobs: DiscoveryJob[]): Record<string, DiscoveryResult> =>
    Object.fromEntries(jobs.map((j) => [j.id, { capabilities: caps }]));

/** Every asked object exists nowhere (a fresh cluster). */
export const nothingExists = (jobs: OwnersJob[]): Record<string, OwnersResult> =>
  Object.fromEntries(jobs.map((j) => [j.id, { objects: j.objects.map(() => null) }]));
