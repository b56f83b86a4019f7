/**
 * The program the engine runs in this process (the Automation API's inline program): the same
 * fleetProgram index.ts runs, given plain inputs (components/program.ts ProgramInputs), and what each run
 * leaves for the operation: its outputs as they resolved, the error it threw, how long it registered.
 */
import * as pulumi from "@pulumi/pulumi";
import { OutputMap, PulumiFn, Stack } from "@pulumi/pulumi/automation";
import { StackConfig } from "../../core/config/stack";
import { fleetProgram, ProgramInputs } from "../../components/program";
import { phase } from "./timings";

/**
 * The operation's part of a program run (automation/operation/session.ts): once the engine has started
 * the program, and so holds the stack's lock, the inputs the program is given, values only: which desired
 * state it registers (decided now, so a computation started before the lock is used only if the stack's
 * history is unchanged) and the operation's own step before it registers anything (the crash journal's
 * record). Nothing of it runs when the engine never starts the program.
 */
export type ProgramInputsAtRun = () => Promise<ProgramInputs>;

/** The program the engine runs in this process: the config (else the stack's) and the inputs, fixed ones or the operation's at run time. */
export function inlineProgram(config: StackConfig | undefined, inputs: ProgramInputs | ProgramInputsAtRun | undefined, captured: Captured): PulumiFn {
  return async () => {
    phase("program started");
    captured.run = runStore();
    captured.programError = undefined;
    captured.registerMs = undefined;
    let outputs: Awaited<ReturnType<typeof fleetProgram>>;
    try {
      const given = typeof inputs === "function" ? await inputs() : inputs;
      // What is timed is the registering alone: the operation's desired state is settled above.
      const started = performance.now();
      outputs = await fleetProgram(config, given);
      if (given?.desired) captured.registerMs = performance.now() - started;
    } catch (err) {
      // Kept for the operation's failure (automation/reports/error-report.ts); the engine gets a RunError,
      // which the SDK reports as its message alone, not as "Unhandled exception: <stack trace>".
      captured.programError = err instanceof Error ? err : new Error(String(err));
      throw new pulumi.RunError(captured.programError.message);
    }
    phase("program registered everything");
    captureOutputs(outputs as unknown as Record<string, pulumi.Input<unknown>>, captured);
    return outputs;
  };
}

/** The program the stack's next engine commands run, with the operation's inputs decided when the engine runs it. */
export function setProgram(stack: Stack, config: StackConfig | undefined, inputs: ProgramInputsAtRun): void {
  stack.workspace.program = inlineProgram(config, inputs, capturedOf.get(stack)!);
}

/** What the program's last run in this process left: its outputs once the engine had them all (none in a preview), the error it threw, its timing. */
export interface Captured {
  outputs?: OutputMap;
  programError?: Error;
  /** How long the program's last run took to register an operation's desired state (benchmarks). */
  registerMs?: number;
  /** The SDK's store of the program's last run in this process, until the engine command that ran it has returned (releaseRun). */
  run?: RunStore;
}

/** What the SDK keeps per program run (its LocalStore): the stack resource, and through it every resource of the run. */
interface RunStore {
  stackResource?: unknown;
  leakCandidates?: Set<unknown>;
  pendingResourceRegistrations?: Map<unknown, unknown>;
}

/** The SDK's store of the run the caller is in (the Automation API runs each program in an AsyncLocalStorage of its own). */
function runStore(): RunStore | undefined {
  return (globalThis as { asyncLocalStorage?: { getStore(): RunStore | undefined } }).asyncLocalStorage?.getStore();
}

/**
 * Lets a finished run's resources go. The SDK's store of a run stays reachable after it: the gRPC
 * client's DNS resolver (a c-ares channel, never freed) was created inside the run and holds its async
 * context, and so the whole resource graph; a process that runs several engine commands (the watcher,
 * the benchmarks) kept every run's graph (a heap snapshot after three previews at 50 clusters: the pairs
 * of all three alive, 17 to 25 MiB more per run). Emptying the store after the command has returned
 * leaves the channel holding an empty store.
 */
export function releaseRun(captured: Captured): void {
  const run = captured.run;
  if (!run) return;
  captured.run = undefined;
  const global = globalThis as { stackResource?: unknown };
  if (global.stackResource === run.stackResource) global.stackResource = undefined;
  run.stackResource = undefined;
  run.leakCandidates?.clear();
  run.pendingResourceRegistrations?.clear();
}
const capturedOf = new WeakMap<Stack, Captured>();

/** Where openStack's program keeps what its runs leave, for the stack it made. */
export function attachCaptured(stack: Stack, captured: Captured): void {
  capturedOf.set(stack, captured);
}

/** The outputs of the program's last run, as they resolved; undefined when not all were captured (a secret, a preview). */
export function capturedOutputsOf(stack: Stack): OutputMap | undefined {
  return capturedOf.get(stack)?.outputs;
}

/** How long the stack's program last took to register the desired state an operation gave it. */
export function registerMsOf(stack: Stack): number | undefined {
  return capturedOf.get(stack)?.registerMs;
}

/** The error the stack's program threw in its last run in this process, if it threw one. */
export function programErrorOf(stack: Stack): Error | undefined {
  return capturedOf.get(stack)?.programError;
}

/**
 * Keeps the program's outputs as they resolve (before the engine finishes), as `stack output` would show
 * them. A secret output is not kept: the SDK reads those back with --show-secrets.
 */
function captureOutputs(outputs: Record<string, pulumi.Input<unknown>>, into: Captured): void {
  into.outputs = undefined;
  const entries = Object.entries(outputs).filter(([, v]) => v !== undefined);
  pulumi.all(entries.map(([, v]) => pulumi.output(v))).apply(async (values) => {
    const secret = await Promise.all(entries.map(([, v]) => pulumi.isSecret(pulumi.output(v))));
    if (secret.some((x) => x)) return;
    into.outputs = Object.fromEntries(
      entries.flatMap(([k], i) => (values[i] === undefined ? [] : [[k, { value: JSON.parse(JSON.stringify(values[i])), secret: false }]])),
    );
  });
}
