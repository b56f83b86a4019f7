/**
 * The desired state as text, objects per cluster: what `up` would apply (`npm run plan -- --desired`).
 * Kubeconfigs are never printed.
 */
import { DesiredObject } from "./objects";
import { DesiredState } from "./types";
import { describeObject } from "../model/k8s-object";

export function describeDesired(state: DesiredState): string[] {
  const lines: string[] = [];
  for (const c of state.clusters) {
    const where = c.provider.renderYamlToDirectory
      ? `rendered to ${c.provider.renderYamlToDirectory}`
      : `${c.provider.kubeconfig !== undefined ? "kubeconfig from the stack" : "ambient kubeconfig"}${c.provider.context ? `, context ${c.provider.context}` : ""}`;
    lines.push(`cluster ${c.name} (${where})`);
    lines.push(c.agent ? `  agent ${c.agent.image} config ${c.agent.configHash.slice(0, 12)}` : "  no agent (agent.enabled: false)");
    for (const a of c.accountProviders) lines.push(`  applies as ${a.user}`);
    for (const ns of c.namespaces) lines.push(`  Namespace ${ns.metadata.name}${ns.retainOnDelete ? " [kept on delete]" : ""}`);
    for (const d of state.deployments.filter((x) => x.cluster === c.name)) {
      const after = d.dependsOn.length ? ` after ${d.dependsOn.join(", ")}` : "";
      lines.push(
        `  bundle ${d.record.bundle} (GitRepo ${d.gitRepo} @ ${d.commit.slice(0, 12)}, deploymentID …${d.record.deploymentId.slice(-12)})${d.held ? " [failed: kept as last deployed]" : ""}${d.account ? ` as ${d.account}` : ""}${after}`,
      );
      for (const o of d.objects) lines.push(`    ${desiredObjectLine(o)}`);
      for (const w of d.warnings) lines.push(`    warning: ${w}`);
    }
  }
  return lines;
}

function desiredObjectLine(o: DesiredObject): string {
  const m = o.manifest;
  const flags = [...(o.retain ? [`kept on delete: ${o.retain}`] : []), ...(o.ignoreDrift ? [`drift ignores ${o.ignoreDrift.join(", ")}`] : [])];
  return `${m.apiVersion} ${describeObject(m)}${flags.length ? ` [${flags.join("; ")}]` : ""}`;
}
