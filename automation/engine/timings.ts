/**
 * PULUMI_FLEET_TIMINGS=1: the fixed cost of an operation, phase by phase on stderr, in ms since the
 * process started (module loading included), up to the engine's end. `npm run bench -- startup` reads them.
 */
export function phase(name: string): void {
  if (process.env.PULUMI_FLEET_TIMINGS === "1") console.error(`timing ${name} ${Math.round(performance.now())} ms`);
}
