/**
 * `healthChecks`: the operator's readiness rule per kind, as Flux's Kustomization `healthCheckExprs`:
 * CEL expressions over the live object (`current`, and optionally `inProgress` and `failed`) decide
 * whether an object of that apiVersion's group and kind is ready, instead of Fleet's conditions summary.
 * Read here; compiled and evaluated only by pulumi-fleet's provider (tools/fleet-provider health.go),
 * the rule's one home: every bundle deployment carries the list in its inputs, only when it is not
 * empty, so a stack without it registers exactly what it did before.
 */
import { Field } from "./reader";
import { keysOf } from "./field-table";
import { HEALTH_CHECK_FIELDS } from "./stack-fields";
import { FleetError } from "../base/errors";
import type { HealthCheck } from "../model/pair";

/** An expression longer than this is refused: the stack file is no place for a program. */
export const MAX_EXPRESSION_LENGTH = 4096;

const API_VERSION = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?v[0-9]+((alpha|beta)[0-9]+)?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;

export function readHealthChecks(list: Field): HealthCheck[] {
  const seen = new Map<string, number>();
  return list.items().map((f, i) => {
    f.object(keysOf(HEALTH_CHECK_FIELDS));
    const apiVersion = f.child("apiVersion").string();
    if (!API_VERSION.test(apiVersion)) f.child("apiVersion").fail(`must be <group>/<version> or <version> (got ${JSON.stringify(apiVersion)})`);
    const kind = f.child("kind").string();
    if (!KIND.test(kind)) f.child("kind").fail(`must be a kind's name, as in a manifest (got ${JSON.stringify(kind)})`);
    // Matched by group and kind, as Flux: two versions of one kind would be two rules for the same objects.
    const groupKind = `${apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.lastIndexOf("/")) : ""}/${kind}`;
    const first = seen.get(groupKind);
    if (first !== undefined) f.child("kind").fail(`${apiVersion} ${kind} has health checks already at index ${first} (one entry per group and kind)`);
    seen.set(groupKind, i);
    const expr = (key: "current" | "inProgress" | "failed", required: boolean): string | undefined => {
      const field = f.child(key);
      const text = required ? field.string() : field.optString();
      if (text !== undefined && !text.trim()) field.fail("is empty");
      if (text !== undefined && text.length > MAX_EXPRESSION_LENGTH) field.fail(`is longer than ${MAX_EXPRESSION_LENGTH} characters`);
      return text;
    };
    const current = expr("current", true)!;
    const inProgress = expr("inProgress", false);
    const failed = expr("failed", false);
    return { apiVersion, kind, current, ...(inProgress !== undefined ? { inProgress } : {}), ...(failed !== undefined ? { failed } : {}) };
  });
}

/** What a bundle deployment's inputs carry: the list, or nothing at all when the stack has none. */
export function healthChecksInput(checks: HealthCheck[] | undefined): { healthChecks?: HealthCheck[] } {
  return checks?.length ? { healthChecks: checks } : {};
}

/** One problem the provider's compiler found (tools/fleet-provider health.go healthProblem). */
export interface HealthCheckProblem {
  index: number;
  field?: string;
  reason: string;
}

/**
 * The compiler's problems as one configuration error naming the stack file and each entry's field,
 * kind and expression (the provider's reason says the kind and quotes the expression).
 */
export function healthCheckError(file: string, problems: HealthCheckProblem[]): FleetError | undefined {
  if (!problems.length) return undefined;
  const lines = problems.map((p) => `healthChecks[${p.index}]${p.field ? `.${p.field}` : ""}: ${p.reason}`);
  return new FleetError(`health checks that do not compile (CEL, as Flux's healthCheckExprs):\n  ${lines.join("\n  ")}`, { file });
}
