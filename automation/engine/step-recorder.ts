/**
 * The engine's step events as they arrive: one Step per resource and operation, with the errors the
 * engine reported. steps.ts attributes them to bundle deployments and agents.
 */
import { EngineEvent, OpType } from "@pulumi/pulumi/automation";
import { isAppliedSet } from "../../core/desired/setup";

export interface Step {
  op: OpType;
  urn: string;
  type: string;
  custom: boolean;
  parent?: string;
  /** Property paths that changed (updates and replaces). */
  diffs: string[];
  failed: boolean;
  /** The live state the engine read (refresh steps): used for readiness. */
  outputs?: Record<string, unknown>;
  /** A BundleDeployment's steps only (pair-steps.ts): its detailed diff and its inputs before and after. */
  detailedDiff?: Record<string, unknown>;
  inputs?: Record<string, unknown>;
  oldInputs?: Record<string, unknown>;
}

const MAX_ERRORS = 100;

/** Collects one Step per resource and operation from an event stream (pass the recorder's push to onEvent). */
export class StepRecorder {
  readonly steps: Step[] = [];
  /** Resources the engine reported an error for, including ones that failed before any step event. */
  readonly failedUrns = new Set<string>();
  private readonly byUrnOp = new Map<string, Step>();
  /** The errors the engine reported, as it worded them (the first MAX_ERRORS), for the failure's text (error-report.ts). */
  readonly errors: { urn?: string; message: string }[] = [];
  /** The engine's count of resources per operation (its summary event), once it has finished. */
  changes?: Record<string, number>;

  /** @param forward also given every event (the caller's own listener, e.g. a progress display) */
  constructor(private readonly forward?: (event: EngineEvent) => void) {}

  /** Forgets a run whose program refused to start it (a prune-only update decided on a state that moved): its retry is reported alone. */
  forget(): void {
    this.steps.length = 0;
    this.byUrnOp.clear();
    this.failedUrns.clear();
    this.errors.length = 0;
    this.changes = undefined;
  }

  readonly onEvent = (event: EngineEvent): void => {
    this.forward?.(event);
    if (event.summaryEvent) this.changes = { ...event.summaryEvent.resourceChanges };
    const diag = event.diagnosticEvent;
    if (diag?.severity === "error" && diag.urn) this.failedUrns.add(diag.urn);
    if (diag?.severity === "error" && !diag.ephemeral && this.errors.length < MAX_ERRORS) this.errors.push({ urn: diag.urn, message: diag.message });
    const pre = event.resourcePreEvent?.metadata;
    const out = event.resOutputsEvent?.metadata;
    const failed = event.resOpFailedEvent?.metadata;
    const meta = pre ?? out ?? failed;
    if (!meta) return;
    const id = `${meta.op} ${meta.urn}`;
    let step = this.byUrnOp.get(id);
    if (!step) {
      const state = meta.new ?? meta.old;
      step = {
        op: meta.op,
        urn: meta.urn,
        type: meta.type,
        custom: state?.custom ?? false,
        parent: state?.parent || undefined,
        diffs: [...(meta.diffs ?? [])].sort(),
        failed: false,
      };
      this.byUrnOp.set(id, step);
      this.steps.push(step);
    }
    if (failed) {
      step.failed = true;
      this.failedUrns.add(meta.urn);
    }
    if ((meta.op === "refresh" || isAppliedSet(meta.type)) && meta.new?.outputs) step.outputs = meta.new.outputs;
    // A pair's inputs are its objects: kept only for a step that changes it (pair-steps.ts reads no
    // other), not for every unchanged pair of a large fleet's preview.
    if (isAppliedSet(meta.type) && meta.op !== "same") {
      if (meta.detailedDiff) step.detailedDiff = meta.detailedDiff;
      if (meta.new?.inputs) step.inputs = meta.new.inputs;
      if (meta.old?.inputs) step.oldInputs = meta.old.inputs;
    }
  };
}
