/**
 * `npm run preview|up|destroy|refresh -- [--stack NAME] [--expect-no-changes]`, and `npm start` (= up
 * of the local stack): the engine operations on one environment's stack, through the Automation API
 * with the project's own engine (tools/). Live engine output, a final summary, non-zero exit on failure.
 */
import { openStack } from "../automation/stack";

type Operation = "preview" | "up" | "destroy" | "refresh";
const OPERATIONS: Operation[] = ["preview", "up", "destroy", "refresh"];

function parseArgs(argv: string[]): { op: Operation; stack: string; expectNoChanges: boolean } {
  const op = argv[0] as Operation;
  if (!OPERATIONS.includes(op)) throw new Error(`usage: fleet.ts <${OPERATIONS.join("|")}> [--stack NAME] [--expect-no-changes]`);
  const i = argv.indexOf("--stack");
  if (i > 0 && !argv[i + 1]) throw new Error("--stack needs a stack name (an environment under stacks/)");
  return { op, stack: i > 0 ? argv[i + 1] : "local", expectNoChanges: argv.includes("--expect-no-changes") };
}

async function main(): Promise<void> {
  const { op, stack: name, expectNoChanges } = parseArgs(process.argv.slice(2));
  const stack = await openStack({ stack: name });
  const onOutput = (s: string) => process.stdout.write(s);
  const started = Date.now();
  let changes: Record<string, number> | undefined;
  if (op === "preview") changes = (await stack.preview({ onOutput, expectNoChanges, diff: true })).changeSummary;
  if (op === "up") changes = (await stack.up({ onOutput, expectNoChanges })).summary.resourceChanges;
  if (op === "refresh") changes = (await stack.refresh({ onOutput, expectNoChanges })).summary.resourceChanges;
  if (op === "destroy") changes = (await stack.destroy({ onOutput })).summary.resourceChanges;
  console.log(`\n${op} of stack ${name} succeeded in ${((Date.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(changes ?? {})}`);
}

main().catch((err: Error) => {
  // Engine failures carry the CLI's own output; print it whole, then a one-line reason.
  console.error(err.message);
  process.exit(1);
});
