/**
 * The operations on one environment's stack as a typed library (what scripts/fleet.ts and users' own
 * scripts call): preview with a pull-request summary, up and destroy with one deploy event per real
 * deploy, refresh, status, cancel. Each is a file of automation/operation/: it opens a session
 * (session.ts: the stack, its state, the clusters probed), runs the real engine and attributes its
 * steps to bundle deployments and agents (engine/steps.ts).
 */
export { preview } from "./operation/preview";
export { up } from "./operation/up";
export { destroy, refresh } from "./operation/destroy";
export { status } from "./operation/status";
export { cancel } from "./operation/cancel";
export { BundlesFailedError, failuresNote, heldNote, OperationError } from "./operation/results";
export type { OperationOptions, OperationResult, PreviewResult, UpResult } from "./operation/results";
