/**
 * Maintenance windows (stack `schedules`, core/config/schedules.ts): where `now` stands in each schedule,
 * asked of fleet-schedule (tools/fleet-schedule), which evaluates Fleet's cron expressions with Fleet's
 * own library (go-quartz) so every fire time is Fleet's; and which clusters are outside their windows,
 * decided here from those answers alone.
 */
import { runInGroup } from "../base/child-group";
import { FleetError } from "../base/errors";
import { ScheduleConfig } from "../config/schedules";
import { StackConfig } from "../config/stack";
import { decideTargets } from "./match";
import { childCommand, stopSignal } from "../base/stop-signal";
import { builtToolPath } from "../base/tool-build";

/** One schedule at `now`: in a window until it closes, or outside until the next one opens (RFC 3339, in its time zone). */
export interface ScheduleWindow {
  name: string;
  active: boolean;
  until: string;
}

/** A cluster outside every window of its schedules: `schedule` is the one that opens first, at `until`. */
export interface OutsideWindow {
  cluster: string;
  schedule: string;
  until: string;
}

interface ToolWindow extends ScheduleWindow {
  error?: string;
  field?: string;
}

/**
 * Each schedule's window at `now`, by name. A schedule fleet-schedule refuses (its cron expression, its
 * duration against the next two fire times, its time zone) is an error naming the stack file, the
 * schedule and the field. No schedules: no tool is built or run.
 */
export async function scheduleWindows(schedules: readonly ScheduleConfig[], now: Date, file: string): Promise<Map<string, ScheduleWindow>> {
  if (!schedules.length) return new Map();
  const bin = builtToolPath("build-schedule.sh", "fleet-schedule (maintenance windows)");
  const [cmd, args] = childCommand(bin, ["windows"]);
  const request = { now: now.toISOString(), schedules: schedules.map(({ name, schedule, duration, location }) => ({ name, schedule, duration, location })) };
  // Only TZ passes: a schedule without `location` is in the runner's local zone, as Fleet's is in its controller's.
  const r = await runInGroup(cmd, args, {
    env: process.env.TZ !== undefined ? { TZ: process.env.TZ } : {},
    input: JSON.stringify(request),
    name: "fleet-schedule",
    maxOutputBytes: 16 * 1024 * 1024,
    stderrKeptBytes: 4096,
    deadlineMs: 60_000,
    deadlineReason: "fleet-schedule took more than 60 s",
  });
  if (r.aborted) throw stopSignal.reason;
  if (r.stopped || r.code !== 0) throw new FleetError(`fleet-schedule failed: ${r.stopped ?? r.stderr.trim()}`, { file });
  const answers = (JSON.parse(r.stdout.toString("utf8")) as { windows: ToolWindow[] }).windows;
  const out = new Map<string, ScheduleWindow>();
  answers.forEach((w, i) => {
    const s = schedules[i];
    if (w.error) throw new FleetError(`schedule ${s.name}: ${w.error}`, { file, field: `${s.field}.${w.field ?? "schedule"}` });
    out.set(s.name, { name: s.name, active: w.active, until: w.until });
  });
  return out;
}

/**
 * The clusters outside their windows, by name: a cluster some schedule targets and none of whose
 * schedules is in a window now (several schedules are a union of windows). A cluster no schedule
 * targets is never held. Pure: the windows, and each schedule's clusters (`targeted`, match.ts), are given.
 */
export function clustersOutsideWindows(
  schedules: readonly ScheduleConfig[],
  windows: ReadonlyMap<string, ScheduleWindow>,
  targeted: ReadonlyMap<string, ReadonlySet<string>>,
  clusters: readonly string[],
): Map<string, OutsideWindow> {
  const out = new Map<string, OutsideWindow>();
  for (const cluster of clusters) {
    const mine = schedules.filter((s) => targeted.get(s.name)?.has(cluster)).map((s) => windows.get(s.name)!);
    if (!mine.length || mine.some((w) => w.active)) continue;
    const first = [...mine].sort((a, b) => Date.parse(a.until) - Date.parse(b.until) || (a.name < b.name ? -1 : 1))[0];
    out.set(cluster, { cluster, schedule: first.name, until: first.until });
  }
  return out;
}

/**
 * The stack's clusters outside their windows at `now`: the desired state's answer, and the operations'
 * drift refresh before `up`. `targeted`: each schedule's clusters, when the caller has matched them
 * already (match.ts Targeting.schedules); else matched here from the stack alone.
 */
export async function clustersOutsideWindowsAt(
  stack: Pick<StackConfig, "file" | "clusters" | "clusterGroups" | "schedules">,
  now: Date,
  targeted?: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<Map<string, OutsideWindow>> {
  const schedules = stack.schedules ?? [];
  if (!schedules.length) return new Map();
  return clustersOutsideWindows(
    schedules,
    await scheduleWindows(schedules, now, stack.file),
    targeted ?? decideTargets({ clusters: stack.clusters, clusterGroups: stack.clusterGroups, schedules }, []).schedules,
    stack.clusters.map((c) => c.name),
  );
}

/** The one phrasing of a window hold. */
export function outsideWindowMessage(o: OutsideWindow): string {
  return `held: cluster ${o.cluster} is outside its schedule ${o.schedule} until ${o.until} (schedules; it keeps what it has)`;
}
