/**
 * The engine CLI's garbage collector settings: Go's default collects whenever the heap doubles, which
 * at thousands of resources is a sixth of the CLI's CPU or more. GOGC=300 collects a third as often; a soft
 * limit (GOMEMLIMIT) makes it collect as needed once the heap nears it: 3 GiB, or a quarter of the
 * memory this process may use where that is less (a small CI runner, a container's limit), so that the
 * larger heap never costs memory a machine does not have. Measured in BENCHMARKS.md section 23. The
 * user's own GOGC and GOMEMLIMIT win.
 */
const GIB = 1024 ** 3;
const LIMIT_BYTES = 3 * GIB;

/** The CLI's GOGC and GOMEMLIMIT for a machine of `memoryBytes`, given the user's environment `env`. */
export function cliMemoryEnv(memoryBytes: number, env: NodeJS.ProcessEnv): { GOGC: string; GOMEMLIMIT: string } {
  const limit = Math.min(LIMIT_BYTES, Math.floor(memoryBytes / 4));
  return { GOGC: env.GOGC ?? "300", GOMEMLIMIT: env.GOMEMLIMIT ?? `${Math.floor(limit / 1024 ** 2)}MiB` };
}

/** The memory this process may use: the container's limit where there is one below the machine's. */
export function usableMemory(total: number, constrained: number | undefined): number {
  return constrained && constrained > 0 && constrained < total ? constrained : total;
}
