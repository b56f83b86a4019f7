/**
 * The garbage collector settings of the engine's Go processes (the CLI, and the plugins it starts, which
 * inherit them): Go's default collects whenever the heap doubles, which at thousands of resources is a
 * sixth of the CLI's CPU or more. GOGC=300 collects a third as often; a soft limit (GOMEMLIMIT) makes it
 * collect as needed once the heap nears it: 3 GiB, or a quarter of the memory this process may use where
 * that is less (a small CI runner, a container's limit), shared by the operations that run at once (a
 * sharded run's --parallel), so that the larger heaps stay within what the machine has. Measured in
 * BENCHMARKS.md section 23. The user's own GOGC and GOMEMLIMIT win.
 */
import * as os from "node:os";

const GIB = 1024 ** 3;
const LIMIT_BYTES = 3 * GIB;

/** GOGC and GOMEMLIMIT for one of `sharing` operations at once on a machine of `memoryBytes`, given the user's environment `env`. */
export function cliMemoryEnv(memoryBytes: number, env: NodeJS.ProcessEnv, sharing = 1): { GOGC: string; GOMEMLIMIT: string } {
  const limit = Math.min(LIMIT_BYTES, Math.floor(memoryBytes / 4 / Math.max(1, sharing)));
  return { GOGC: env.GOGC ?? "300", GOMEMLIMIT: env.GOMEMLIMIT ?? `${Math.floor(limit / 1024 ** 2)}MiB` };
}

/** The memory this process may use: the container's limit where there is one below the machine's. */
export function usableMemory(total: number, constrained: number | undefined): number {
  return constrained && constrained > 0 && constrained < total ? constrained : total;
}

/** The settings for the engine's processes started from here, `sharing` operations at once. */
export function engineMemoryEnv(sharing = 1): { GOGC: string; GOMEMLIMIT: string } {
  return cliMemoryEnv(usableMemory(os.totalmem(), process.constrainedMemory?.()), process.env, sharing);
}
