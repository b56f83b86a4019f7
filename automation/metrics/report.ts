/**
 * An operation's metrics, left after it ends whether it succeeded or failed: the operations fill a
 * RunFacts as they learn things (the stack's setting, the engine's counts, each pair's state), and
 * withMetrics writes and pushes what they gathered, then returns or rethrows the operation's own result
 * unchanged. Writing or pushing metrics never fails an operation nor changes its outcome: a failure
 * is a warning.
 */
import * as path from "node:path";
import { MetricsConfig } from "../../core/config/metrics";
import { ClusterMetrics, fleetStateExposition, Operation, PairMetrics, runExposition } from "./exposition";
import { pushGroup, PushOptions, writeTextfile } from "./publish";

export interface RunFacts {
  /** The stack's metrics setting, once the operation can read it (undefined: not configured). */
  config?: () => Promise<MetricsConfig | undefined>;
  /** The engine's resources by step, once it ran. */
  engine?: () => Record<string, number> | undefined;
  /** Every pair's state, when the operation read the fleet's (up, status). */
  pairs?: PairMetrics[];
  /** Every cluster's reach, when the operation probed them. */
  clusters?: ClusterMetrics[];
  /** A rollback is pinned (automation/runs/runs.ts), when the operation read the stack's runs. */
  pinned?: boolean;
}

export interface MetricsOptions {
  stack: string;
  onWarning?: (message: string) => void;
  /** Tests: the Pushgateway's retry pacing. */
  push?: PushOptions;
}

/** The files in the textfile directory: the fleet's state, and each operation's outcome (so a status run never hides an up's). */
export const stateFileName = (stack: string) => `pulumi-fleet-${stack}-state.prom`;
export const runFileName = (stack: string, operation: Operation) => `pulumi-fleet-${stack}-${operation}.prom`;

export async function withMetrics<T>(operation: Operation, options: MetricsOptions, run: (facts: RunFacts) => Promise<T>): Promise<T> {
  const started = Date.now();
  const facts: RunFacts = {};
  let result: T;
  try {
    result = await run(facts);
  } catch (err) {
    await publish(operation, options, facts, false, started);
    throw err;
  }
  await publish(operation, options, facts, true, started);
  return result;
}

async function publish(operation: Operation, options: MetricsOptions, facts: RunFacts, success: boolean, started: number): Promise<void> {
  const warn = (m: string) => (options.onWarning ?? ((x: string) => console.error(x)))(`warning: stack ${options.stack}: metrics: ${m}`);
  let config: MetricsConfig | undefined;
  try {
    config = await facts.config?.();
  } catch {
    return; // the stack's setting cannot be read: the operation's own error says why
  }
  if (!config) return;
  const finishedAt = new Date();
  const outputs: { name: string; grouping: [string, string][]; text: string }[] = [
    {
      name: runFileName(options.stack, operation),
      grouping: [
        ["stack", options.stack],
        ["operation", operation],
      ],
      text: runExposition({ stack: options.stack, operation, success, durationMs: finishedAt.getTime() - started, finishedAt, engine: facts.engine?.() }),
    },
  ];
  if (facts.pairs) {
    outputs.push({
      name: stateFileName(options.stack),
      grouping: [["stack", options.stack]],
      text: fleetStateExposition({ stack: options.stack, observedAt: finishedAt, pairs: facts.pairs, clusters: facts.clusters, pinned: facts.pinned }),
    });
  }
  for (const o of outputs) {
    if (config.textfileDirectory) {
      try {
        writeTextfile(config.textfileDirectory, o.name, o.text);
      } catch (err) {
        warn(`could not write ${path.join(config.textfileDirectory, o.name)}: ${(err as Error).message}`);
      }
    }
    if (config.pushgateway) {
      const problem = await pushGroup(config.pushgateway, o.grouping, o.text, options.push);
      if (problem) warn(`the push to the Pushgateway failed: ${problem}`);
    }
  }
}
