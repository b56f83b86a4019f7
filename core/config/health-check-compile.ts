/**
 * The stack's health-check expressions compiled before anything is registered, by the code that will
 * evaluate them: pulumi-fleet's provider binary in its `--check-health-checks` mode (tools/fleet-provider
 * health.go). One CEL implementation, so what passes here is exactly what the provider runs; a stack
 * file with a broken expression stops the program with the stack file, field, kind and expression named.
 */
import { execFileSync } from "node:child_process";
import { builtToolPath } from "../base/tool-build";
import { healthCheckError, HealthCheckProblem } from "./health-checks";
import { HealthCheck } from "../model/pair";

/** Throws the configuration error naming each expression that does not compile; nothing to do without checks. */
export function compileHealthChecks(file: string, checks: HealthCheck[] | undefined, providerPath: () => string = defaultProviderPath): void {
  if (!checks?.length) return;
  const out = execFileSync(providerPath(), ["--check-health-checks"], { input: JSON.stringify(checks), encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] });
  const err = healthCheckError(file, JSON.parse(out) as HealthCheckProblem[]);
  if (err) throw err;
}

function defaultProviderPath(): string {
  return builtToolPath("build-provider.sh", "pulumi-fleet's provider");
}
