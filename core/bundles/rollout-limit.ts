/** Fleet's int-or-percentage limits of a rolloutStrategy: fleet.yaml's reader checks them, the rollout (core/targeting/rollout.ts) counts with them. */
import { FleetError } from "../base/errors";
import { IntOrString } from "./types";

/**
 * Fleet's `limit`: the first value given, else 100%; a percentage of `count` rounded down, at least 1;
 * a number clamped to [0, count]; a string of digits taken as it is. `count` of 0 gives 1.
 */
export function limit(count: number, field: string, ...values: (IntOrString | undefined)[]): number {
  if (count <= 0) return 1;
  const v = values.find((x) => x !== undefined) ?? "100%";
  if (typeof v === "number") return v > count ? count : v < 0 ? 0 : v;
  if (/^-?\d+$/.test(v) && Number(v) > 0) return Number(v);
  if (!v.endsWith("%") || Number.isNaN(Number(v.slice(0, -1))) || v.slice(0, -1).trim() === "") {
    throw new FleetError(`invalid value ${JSON.stringify(v)}: must be an integer or a percentage (ending with %)`, { field });
  }
  const percent = Number(v.slice(0, -1));
  if (percent <= 0) return 1;
  const n = Math.floor(Math.trunc(count * percent) / 100);
  return n <= 0 ? 1 : n > count ? count : n;
}
