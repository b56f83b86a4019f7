/**
 * What a shard left out (its inputs unchanged since its last successful up: automation/shards/inputs.ts)
 * leaves for Prometheus: its run file and group say the operation succeeded now (as the up or preview it
 * stands for would have: it had nothing to do; no engine ran, so no engine steps), so docs/metrics.md's "no
 * successful up for a day" alert does not fire for a shard that simply had nothing to do. Its state file
 * stays as its last up wrote it (the fleet's state did not change).
 */
import { loadStackConfig } from "../../core/config/shard-files";
import { withMetrics } from "../metrics/report";

export async function leftOutMetrics(dir: string, op: "up" | "preview", stack: string, warn: (message: string) => void): Promise<void> {
  await withMetrics(op, { stack, onWarning: warn }, async (facts) => {
    facts.config = async () => loadStackConfig(dir, stack).config.metrics;
  });
}
