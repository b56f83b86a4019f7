/**
 * The desired state computed while the CLI starts. The inline program runs in this process, and what it
 * computes needs only what the operation has already read: the stack's config and its state (the last
 * outputs, the deployed objects). So the operation starts that computation once the clusters are probed,
 * and the program, when the engine runs it 0.3 s later (the CLI's start and key derivation), registers
 * the result instead of computing it then.
 *
 * It holds only if the state is still the one read: the program runs under the stack's lock, which
 * the operation does not hold while it reads. A file backend adds an entry to the stack's history at the
 * end of every update, refresh or import, so the program takes the early result only when that history
 * is as it was before the state was read; otherwise (another update finished meanwhile, or this
 * operation's own refresh ran) it computes the desired state afresh, as without this. Other backends
 * always compute in the program.
 */
import * as fs from "node:fs";
import { StackConfig } from "../../core/config/stack";
import { Facts, liveFacts } from "../../core/desired/facts";
import { DEPLOYMENT_STATES_OUTPUT, DEPLOYMENTS_OUTPUT, PreviousDeployment, previousFromOutputs, RECORD_OUTPUT } from "../../core/desired/previous";
import { desiredState } from "../../core/desired/state";
import { DeployOptions, EarlyDesired } from "../../core/desired/options";
import { FleetState } from "../../core/plan/pipeline";
import { DesiredState } from "../../core/desired/types";
import { StackState } from "./deployed-objects";
import { fileBackendPath } from "./stack";

/** The stack's history in a file backend, as a value that changes when an entry is added; undefined elsewhere. */
export function historyMark(fileDir: string | undefined, stack: string): string | undefined {
  const dir = fileDir && fileBackendPath(fileDir, "history", stack);
  if (!dir) return undefined;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "none";
    return undefined;
  }
  const entries = names.filter((n) => n.endsWith(".history.json") || n.endsWith(".history.json.gz"));
  return `${entries.length}:${entries.sort().pop() ?? ""}`;
}

export interface EarlyStart {
  config: StackConfig;
  state: StackState;
  /** The deploy options the program gets, with the operation's callbacks. */
  deploy: DeployOptions;
  /** The history mark taken before the state was read, and a way to take it again. */
  mark: string;
  markNow: () => string | undefined;
  /** The facts from the last outputs (tests give their own; the operations the live ones). */
  factsOf?: (previous: () => Promise<PreviousDeployment | undefined>, deploy: DeployOptions) => Facts;
}

const liveFactsOf = (previous: () => Promise<PreviousDeployment | undefined>, deploy: DeployOptions) =>
  liveFacts(previous, deploy.journal, deploy.deployed, deploy.legacySetups);

/**
 * Starts computing the desired state; the returned function is the program's `early`: the computation,
 * once, if the history still holds. The operation's onPlanned and onDesired see its values only then.
 */
export function startEarly(start: EarlyStart): () => EarlyDesired | undefined {
  const { outputs } = start.state;
  const previous = previousFromOutputs(outputs[RECORD_OUTPUT]?.value, outputs[DEPLOYMENTS_OUTPUT]?.value, outputs[DEPLOYMENT_STATES_OUTPUT]?.value);
  const facts = (start.factsOf ?? liveFactsOf)(async () => previous, start.deploy);
  let planned: FleetState | undefined;
  let done: DesiredState | undefined;
  const computing = desiredState(start.config, facts, {
    ...start.deploy,
    onPlanned: (s) => {
      planned = s;
    },
    onDesired: (d) => {
      done = d;
    },
  });
  computing.catch(() => undefined); // the program rethrows it, if it takes it
  let taken = false;
  return () => {
    if (taken || start.markNow() !== start.mark) return undefined;
    taken = true;
    return {
      facts,
      desired: async () => {
        try {
          return await computing;
        } finally {
          if (planned) start.deploy.onPlanned?.(planned);
          if (done) start.deploy.onDesired?.(done);
        }
      },
    };
  };
}
