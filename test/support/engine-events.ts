/**
 * A BundleDeployment's step as the engine reports it in a resOutputsEvent (new and old state, the
 * detailed diff), for unit tests of what the operations read from the engine's events.
 */
import { EngineEvent, OpType } from "@pulumi/pulumi/automation";

export function bundleDeploymentEvent(e: {
  op: OpType;
  urn: string;
  id: string;
  inputs: Record<string, unknown>;
  oldInputs?: Record<string, unknown>;
  detailedDiff?: Record<string, unknown>;
  /** The outputs of a state with these inputs. */
  outputs: (inputs: Record<string, unknown>) => Record<string, unknown>;
}): EngineEvent {
  const type = "pulumi-fleet:index:BundleDeployment";
  const state = (inputs: Record<string, unknown>) => ({
    type,
    urn: e.urn,
    custom: true,
    parent: "",
    id: e.id,
    inputs,
    outputs: e.outputs(inputs),
    provider: "",
  });
  return {
    sequence: 0,
    timestamp: 0,
    resOutputsEvent: {
      metadata: {
        op: e.op,
        urn: e.urn,
        type,
        provider: "",
        new: state(e.inputs),
        ...(e.oldInputs ? { old: state(e.oldInputs) } : {}),
        ...(e.detailedDiff ? { detailedDiff: e.detailedDiff } : {}),
      },
    },
  } as unknown as EngineEvent;
}
