/**
 * Render mode writes manifests to files, Secrets with their values in clear: that is what it is for (a
 * directory another tool applies), and it says so, naming each Secret, in the preview and the `up`
 * output, wherever the values came from (committed, rendered by a chart, decrypted from SOPS files,
 * the agent's token, the operator's downstreamResources).
 */
import * as path from "node:path";

interface Named {
  kind?: unknown;
  metadata?: { name?: string; namespace?: string };
}

const nameOf = (o: Named) => (o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata?.name}` : `${o.metadata?.name}`);

/** A deployment's notes: its decrypted Secrets ("<namespace>/<name> (<file>)") and every other Secret among its objects. */
export function renderedSecretsNotes(renderDir: string, cluster: string, objects: readonly Named[], decrypted: readonly string[] = []): string[] {
  const dir = path.join(renderDir, cluster);
  const fromSops = new Set(decrypted.map((d) => d.replace(/ \(.*\)$/, "")));
  const others = objects
    .filter((o) => o.kind === "Secret")
    .map(nameOf)
    .filter((n) => !fromSops.has(n));
  return [
    ...(decrypted.length ? [`render mode writes the Secrets decrypted from SOPS files in clear to ${dir}: ${decrypted.join(", ")}`] : []),
    ...(others.length ? [`render mode writes this bundle's Secrets in clear to ${dir}: ${others.join(", ")}`] : []),
  ];
}

/** A cluster's setup's Secrets that hold a secret value: the agent's, when it has a token, and the operator's downstreamResources. */
export function setupSecretsNote(
  renderDir: string,
  cluster: string,
  secrets: readonly { manifest: Named & { stringData?: Record<string, unknown> } }[],
): string[] {
  const holding = secrets.filter((s) => s.manifest.stringData?.token !== "");
  if (!holding.length) return [];
  return [
    `cluster ${cluster}: render mode writes its Secrets (the agent's token, downstreamResources) in clear to ${path.join(renderDir, cluster)}: ${holding.map((s) => nameOf(s.manifest)).join(", ")}`,
  ];
}
