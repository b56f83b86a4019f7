/**
 * Fleet's `downstreamResources` (a bundle option of fleet.yaml, on the Bundle objects Fleet makes from
 * a GitRepo; `kubectl get ...,bundles -o yaml` exports them) onto the GitRepo's stack setting
 * `downstreamResources` (core/config/downstream-resources.ts). Fleet copies each named Secret of the
 * workspace namespace into the bundle deployment's namespace (GetDeploymentNS: targetNamespace, else
 * defaultNamespace, else the agent's "default"). The values are never in an export and are never
 * copied: each Secret becomes a note with the entry to add and the command that sets its values
 * encrypted, not an entry that would create an empty or placeholder Secret on the clusters.
 */
import { isObj, Note, Obj } from "./fields";
import { objectName } from "../model/k8s-object";

/** The label Fleet puts on a Bundle: the GitRepo it came from. */
const REPO_NAME_LABEL = "fleet.cattle.io/repo-name";

/** Notes for the downstreamResources of one GitRepo's Bundles; `index` is its place in the stack file's gitRepos. */
export function noteDownstreamResources(gitRepo: string, index: number, workspace: string, bundles: { name: string; raw: Obj }[], note: Note): void {
  const seen = new Set<string>();
  for (const b of bundles.filter((x) => (x.raw.metadata as Obj | undefined)?.labels && ((x.raw.metadata as Obj).labels as Obj)[REPO_NAME_LABEL] === gitRepo)) {
    const spec = isObj(b.raw.spec) ? b.raw.spec : {};
    const namespace = str(spec.targetNamespace) ?? str(spec.defaultNamespace) ?? "default";
    for (const r of list(spec.downstreamResources)) {
      const kind = str(r.kind)?.toLowerCase();
      const name = str(r.name) ?? "";
      if (kind !== "secret") {
        note(
          `Bundle ${b.name} downstreamResources`,
          `${JSON.stringify(r)}: not mapped: only Secrets are handed to clusters here; commit a ConfigMap with the bundle's content`,
        );
        continue;
      }
      const entry = `{kind: Secret, name: ${name}, namespace: ${namespace}}`;
      if (seen.has(entry)) continue;
      const j = seen.size;
      seen.add(entry);
      note(
        "downstreamResources",
        `Fleet copies ${objectName({ kind: "Secret", namespace: workspace, name })} into namespace ${namespace} for Bundle ${b.name}: not copied (no export holds its values): add ${entry} ` +
          `as downstreamResources[${j}] (with its type, if not Opaque), then set each of its keys encrypted: ` +
          `npm run pulumi -- config set --secret --path 'pulumi-fleet:gitRepos[${index}].downstreamResources[${j}].stringData.KEY' < value-file`,
      );
    }
    for (const t of list(spec.targets)) {
      if (list(t.downstreamResources).length) {
        note(
          `Bundle ${b.name} targets[${str(t.name) ?? ""}].downstreamResources`,
          `${JSON.stringify(t.downstreamResources)}: not mapped: per-target Secrets; the stack's downstreamResources go to every cluster the GitRepo targets (split the GitRepo to narrow them)`,
        );
      }
    }
  }
}

const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
