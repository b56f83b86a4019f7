/**
 * `npm run preview|up|destroy|refresh|status -- [--stack NAME] [options]`, and `npm start` (= up of the
 * local stack): the operations of automation/operations.ts on one environment's stack, with the engine's
 * live output, a final summary, deploy events after up/destroy, and a non-zero exit on failure.
 *
 * Options:
 *   --stack NAME           the environment (stacks/Pulumi.NAME.yaml; default local)
 *   --expect-no-changes    fail if anything would change (preview, up, refresh): a CI drift gate
 *   --refresh              refresh from the clusters first (preview, up)
 *   --summary-md FILE      preview: write the pull-request summary (Markdown) to FILE
 *   --events-json FILE     up, destroy: also write the deploy events as JSON lines to FILE
 *   --json                 status: print JSON instead of the table
 *   --quiet                do not stream the engine's output
 *   --skip-checkpoints     write the state once at the end, not after every step (large stacks; see BENCHMARKS.md)
 */
import * as fs from "node:fs";
import { DeployEvent, formatDeployEvent } from "../automation/deploy-events";
import * as ops from "../automation/operations";
import { formatStatusTable } from "../automation/status";

const OPERATIONS = ["preview", "up", "destroy", "refresh", "status"] as const;
type Operation = (typeof OPERATIONS)[number];

interface Args {
  op: Operation;
  stack: string;
  expectNoChanges: boolean;
  refresh: boolean;
  summaryMd?: string;
  eventsJson?: string;
  json: boolean;
  quiet: boolean;
  skipCheckpoints: boolean;
}

function parseArgs(argv: string[]): Args {
  const op = argv[0] as Operation;
  if (!OPERATIONS.includes(op)) throw new Error(`usage: fleet.ts <${OPERATIONS.join("|")}> [--stack NAME] [options] (see scripts/fleet.ts)`);
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    if (i < 0) return undefined;
    if (!argv[i + 1] || argv[i + 1].startsWith("--")) throw new Error(`${flag} needs a value`);
    return argv[i + 1];
  };
  const known = new Set(["--stack", "--expect-no-changes", "--refresh", "--summary-md", "--events-json", "--json", "--quiet", "--skip-checkpoints"]);
  const unknown = argv.slice(1).filter((a, i, all) => a.startsWith("--") && !known.has(a) && !(i > 0 && ["--stack", "--summary-md", "--events-json"].includes(all[i - 1])));
  if (unknown.length) throw new Error(`unknown option ${unknown[0]} (see scripts/fleet.ts)`);
  return {
    op, stack: value("--stack") ?? "local", expectNoChanges: argv.includes("--expect-no-changes"), refresh: argv.includes("--refresh"),
    summaryMd: value("--summary-md"), eventsJson: value("--events-json"), json: argv.includes("--json"), quiet: argv.includes("--quiet"),
    skipCheckpoints: argv.includes("--skip-checkpoints"),
  };
}

function report(events: DeployEvent[], file?: string): void {
  for (const e of events) console.log(formatDeployEvent(e));
  if (file) fs.writeFileSync(file, events.map((e) => JSON.stringify({ time: new Date().toISOString(), ...e })).join("\n") + (events.length ? "\n" : ""));
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const options: ops.OperationOptions = {
    stack: args.stack, expectNoChanges: args.expectNoChanges, refresh: args.refresh, skipCheckpoints: args.skipCheckpoints,
    onOutput: args.quiet || (args.op === "status" && args.json) ? undefined : (s) => process.stdout.write(s),
  };
  const done = (r: ops.OperationResult) =>
    console.log(`\n${args.op} of stack ${args.stack} succeeded in ${(r.durationMs / 1000).toFixed(1)} s: ${JSON.stringify(r.changes)}`);
  try {
    switch (args.op) {
      case "preview": {
        const r = await ops.preview(options);
        if (args.summaryMd) fs.writeFileSync(args.summaryMd, r.summaryMarkdown);
        for (const p of r.prunes) console.log(`Will prune bundle ${p.bundle} from ${p.cluster} (${p.objects} objects): ${p.reason.replace(/`/g, "")}`);
        done(r);
        break;
      }
      case "up":
      case "destroy": {
        const r = await (args.op === "up" ? ops.up(options) : ops.destroy(options));
        console.log("");
        report(r.events, args.eventsJson);
        done(r);
        break;
      }
      case "refresh":
        done(await ops.refresh(options));
        break;
      case "status": {
        const r = await ops.status(options);
        process.stdout.write(args.json ? JSON.stringify(r, null, 2) + "\n" : "\n" + formatStatusTable(r));
        break;
      }
    }
  } catch (err) {
    if (err instanceof ops.OperationError) report(err.events, args.eventsJson);
    throw err;
  }
}

main().catch((err: Error) => {
  // Engine failures carry the CLI's own output; print it whole.
  console.error(err.message);
  process.exit(1);
});
