/**
 * The Helm hooks a pair's step runs (tools/fleet-provider hooks.go), as a preview tells them: an install
 * (the pair is created) runs its pre- and post-install hooks, an upgrade (its deploymentId changes) its
 * pre- and post-upgrade hooks, its deletion its pre- and post-delete hooks; each phase's hooks in the
 * order they run (weight, then name). Hooks are never objects the set keeps: they are told apart. A
 * retry of a release whose hooks failed runs them again, which a preview cannot see (the provider
 * decides it from the pair's last outputs).
 */
import { hookObject, type PairHook } from "../../core/model/pair";
import type { Step } from "./step-recorder";

const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/** "pre-upgrade Job web/migrate", per hook this step runs, in order; a secret set of hooks is one line. */
export function hookRuns(s: Pick<Step, "op" | "inputs" | "oldInputs">): string[] {
  const phases =
    s.op === "create"
      ? { of: s.inputs, events: ["pre-install", "post-install"] }
      : s.op === "update" && s.inputs?.deploymentId !== s.oldInputs?.deploymentId
        ? { of: s.inputs, events: ["pre-upgrade", "post-upgrade"] }
        : s.op === "delete"
          ? { of: s.oldInputs, events: ["pre-delete", "post-delete"] }
          : undefined;
  const hooks = phases?.of?.hooks;
  if (!phases || hooks === undefined || hooks === null) return [];
  if (typeof hooks !== "object" || SECRET_SIG in hooks) return [`${phases.events.join(" and ")} hooks (a secret: not shown)`];
  // A hook kept in the pair's content stands as its identity (its key).
  const parsed = (hooks as PairHook[]).map((h) => ({ ...h, object: hookObject(h) }));
  return phases.events.flatMap((event) =>
    parsed
      .filter((h) => h.events.includes(event as PairHook["events"][number]))
      .sort((a, b) => a.weight - b.weight || String(a.object.metadata?.name).localeCompare(String(b.object.metadata?.name)))
      .map((h) => {
        const m = h.object.metadata ?? {};
        return `${event} ${h.object.kind} ${m.namespace ? `${m.namespace}/` : ""}${m.name}`;
      }),
  );
}
