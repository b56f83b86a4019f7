/** A deployment record (core/desired/records.ts) as the stack's `deployments` output holds it, for unit tests of what reads the outputs. */
import { DeploymentRecord } from "../../core/desired/records";

export const record = (cluster: string, bundle: string, over: Partial<DeploymentRecord> = {}): DeploymentRecord => ({
  gitRepo: "apps",
  bundle,
  cluster,
  target: "all",
  deploymentId: `s-${bundle}:1`,
  commit: "c0ffee",
  namespace: "default",
  paused: false,
  objectCount: 3,
  revision: 1,
  ...over,
});
