/**
 * `schedules`: maintenance windows, Fleet's Schedule resource (fleet.cattle.io/v1alpha1, v0.16.0) as a
 * stack-file list with its spec's field names: `schedule` (a Quartz cron expression: seconds first, 6 or
 * 7 fields), `duration` (a Go duration), `location` (an IANA time zone; the runner's local zone when
 * left out, as Fleet's controller uses its own) and `targets.clusters` (Fleet's ScheduleTarget list).
 * The expression and the zone are checked by fleet-schedule (core/targeting/schedule-windows.ts), with
 * Fleet's own cron library; here the shape, the names and the duration's syntax.
 */
import { Field } from "./reader";
import { keysOf, tableOf } from "./field-table";
import { SCHEDULE_FIELDS } from "./stack-fields";
import { dnsLabelProblem } from "../base/k8s-validation";
import type { TargetCriteria } from "./target-criteria";

export interface ScheduleConfig {
  name: string;
  schedule: string;
  duration: string;
  location?: string;
  /** Fleet's spec.targets.clusters: a cluster in any of them is in this schedule. */
  targets: TargetCriteria[];
  /** Where it is written, for errors: `schedules[i]`. */
  field: string;
}

/** Fleet's CRD validation of spec.duration (units up to hours; no days or weeks). */
const GO_DURATION = /^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$/;

export function readSchedules(list: Field, readTarget: (f: Field) => TargetCriteria): ScheduleConfig[] {
  const out = list.items().map((f): ScheduleConfig => {
    f.object(keysOf(SCHEDULE_FIELDS));
    const name = f.child("name").string();
    const problem = dnsLabelProblem(name);
    if (problem) f.child("name").fail(`invalid name ${JSON.stringify(name)}: ${problem}`);
    const duration = f.child("duration").string();
    if (!GO_DURATION.test(duration)) {
      f.child("duration").fail(
        `${JSON.stringify(duration)} is not a Go duration with units ns, us, µs, ms, s, m, h (e.g. 30m, 4h, 1h30m); Fleet's Schedule takes no d or w`,
      );
    }
    const location = f.child("location").optString();
    const targets = f.child("targets").present
      ? f
          .child("targets")
          .object(keysOf(tableOf(SCHEDULE_FIELDS.targets)))
          .child("clusters")
          .items()
          .map(readTarget)
      : [];
    if (!targets.length)
      f.child("targets")
        .child("clusters")
        .fail(
          "is required: the clusters this schedule holds (name, clusterName, clusterSelector, clusterGroup, clusterGroupSelector), as Fleet's ScheduleTarget",
        );
    return { name, schedule: f.child("schedule").string(), duration, ...(location ? { location } : {}), targets, field: f.path };
  });
  const seen = new Map<string, number>();
  out.forEach((s, i) => {
    const first = seen.get(s.name);
    if (first !== undefined)
      list
        .index(i)
        .child("name")
        .fail(`duplicate name ${JSON.stringify(s.name)} (also at index ${first})`);
    seen.set(s.name, i);
  });
  return out;
}
