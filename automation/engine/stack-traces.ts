/**
 * The Pulumi SDK records `new Error().stack` for every promise it creates (to report leaks), and under
 * ts-node every such stack is source-mapped: at 1,300 resources that was three quarters of this
 * program's registration time (BENCHMARKS.md). While the program runs, call sites are therefore not
 * captured. Error messages, which carry everything our errors say (file, field, bundle, cluster), are
 * unaffected; PULUMI_FLEET_STACK_TRACES=1 keeps full stack traces for debugging.
 */
export async function withoutStackTraces<T>(f: () => Promise<T>): Promise<T> {
  if (process.env.PULUMI_FLEET_STACK_TRACES === "1") return f();
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return await f();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
