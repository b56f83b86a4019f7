/**
 * One Pulumi Kubernetes Operator `Stack` resource (pulumi.com/v1) per shard: the operator checks this
 * project out of `repo` at `branch` and runs `pulumi up` on the shard's stack, with the backend URL and
 * passphrase from a Secret (never inline). The shape follows the operator's CustomResourceDefinition
 * (v1.16.0, the version the Go module proxy serves; tools/operator-crd.sh), which a live test applies
 * these to with a server-side dry run. The operator's own images are not obtainable here, so no test
 * runs the operator itself.
 */
import { createHash } from "node:crypto";
import * as YAML from "yaml";

export const OPERATOR_DEFAULTS = { branch: "main", namespace: "pulumi-fleet", secret: "pulumi-fleet-backend" };

export interface OperatorStackOptions {
  repo: string;
  branch?: string;
  namespace?: string;
  /** The Secret with PULUMI_BACKEND_URL and PULUMI_CONFIG_PASSPHRASE keys. */
  secret?: string;
}

/**
 * A Kubernetes name for a stack name: "prod.eu" -> "pulumi-fleet-prod-eu". One longer than a name may be
 * keeps its start and a hash of the whole stack name (cut alone, two shards of a long shardBy value,
 * `...-1` and `...-2`, would name one Stack).
 */
export function operatorStackName(stack: string): string {
  const name = `pulumi-fleet-${stack.toLowerCase().replace(/[^a-z0-9-]+/g, "-")}`.replace(/-+$/, "");
  if (name.length <= 63) return name;
  return `${name.slice(0, 54).replace(/-+$/, "")}-${createHash("sha256").update(stack).digest("hex").slice(0, 8)}`;
}

export function operatorStackObjects(stacks: string[], o: OperatorStackOptions): Record<string, unknown>[] {
  // Two stacks one name would be one Stack: applying the objects would run one of them and never the other.
  const byName = new Map<string, string>();
  for (const stack of stacks) {
    const other = byName.get(operatorStackName(stack));
    if (other !== undefined) throw new Error(`stacks ${other} and ${stack} would both be the operator Stack ${operatorStackName(stack)}: rename one`);
    byName.set(operatorStackName(stack), stack);
  }
  const secret = o.secret ?? OPERATOR_DEFAULTS.secret;
  const fromSecret = (key: string) => ({ type: "Secret", secret: { name: secret, key } });
  return stacks.map((stack) => ({
    apiVersion: "pulumi.com/v1",
    kind: "Stack",
    metadata: {
      name: operatorStackName(stack),
      namespace: o.namespace ?? OPERATOR_DEFAULTS.namespace,
      labels: { "app.kubernetes.io/part-of": "pulumi-fleet" },
    },
    spec: {
      stack,
      projectRepo: o.repo,
      branch: o.branch ?? OPERATOR_DEFAULTS.branch,
      envRefs: { PULUMI_BACKEND_URL: fromSecret("PULUMI_BACKEND_URL"), PULUMI_CONFIG_PASSPHRASE: fromSecret("PULUMI_CONFIG_PASSPHRASE") },
      // A pushed commit is deployed; between commits the operator re-runs the stack, so drift is corrected as `npm run up` does.
      continueResyncOnCommitMatch: true,
      resyncFrequencySeconds: 300,
      refresh: true,
      // Deleting the Stack resource must never delete a cluster's workloads.
      destroyOnFinalize: false,
    },
  }));
}

export function operatorStacks(stacks: string[], o: OperatorStackOptions): string {
  return operatorStackObjects(stacks, o)
    .map((x) => YAML.stringify(x))
    .join("---\n");
}
