/**
 * One shard's operation in a process of its own (started by automation/shards/runner.ts, which says why
 * a process): reads its job, runs the operation in this process through the operations library
 * (automation/run-operation.ts, the lines the CLI prints), writes the outcome for the merged report and
 * exits non-zero on failure with the failure worded as the CLI words it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { stopOnSignals, stoppedCode } from "../../core/base/stop-signal";
import { guarded } from "../engine/process-guard";
import { resolveBackend } from "../engine/backend";
import { reportFailure } from "../reports/error-report";
import { exitCodeOf } from "../reports/exit-codes";
import { OperationOutcome, OperationRequest, runOperation } from "../run-operation";
import { knownProgramCodeHash } from "../engine/program-code";

export interface ShardJob {
  request: Omit<OperationRequest, "outcome">;
  /** Where the outcome is written (JSON). */
  outcomeFile: string;
  /** The runner's digest of the code (program-code.ts), read before it decided: the shard's process does not read the tree again. */
  codeHash?: string;
}

async function main(jobFile: string): Promise<void> {
  const job = JSON.parse(fs.readFileSync(jobFile, "utf8")) as ShardJob;
  if (job.codeHash) knownProgramCodeHash(job.codeHash);
  const context = { op: job.request.op, stack: job.request.stack };
  // SIGINT/SIGTERM (the runner's stop, passed on by proc-guard) stop the operation; its renderer batches run under proc-guard too.
  stopOnSignals({ wrapSpawn: guarded });
  const outcome = (o: OperationOutcome) => fs.writeFileSync(job.outcomeFile, JSON.stringify(o));
  try {
    await runOperation({ ...job.request, outcome }, context);
  } catch (err) {
    console.error(reportFailure(err, context, path.join(resolveBackend().localDir, "logs")));
    // The CLI's own codes (reports/exit-codes.ts): a shard that only could not read a cluster exits 3, for shardsError.
    process.exitCode = stoppedCode() ?? exitCodeOf(err);
  }
}

void main(process.argv[2]);
