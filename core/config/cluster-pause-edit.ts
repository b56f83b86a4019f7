/**
 * `npm run pause` / `npm run resume` as a pure edit of a stack file's text: the cluster's `paused` set
 * or removed in `pulumi-fleet:clusters`, everything else of the file (comments, order, encrypted values)
 * as it was (yaml's Document API keeps them).
 */
import * as YAML from "yaml";
import { FleetError } from "../base/errors";
import { CONFIG_NAMESPACE, ClusterPause } from "./stack";

const CLUSTERS = `${CONFIG_NAMESPACE}:clusters`;

/** The stack file's text with `cluster` paused (`pause`) or resumed (undefined). */
export function withClusterPause(text: string, file: string, cluster: string, pause: ClusterPause | undefined): string {
  const doc = YAML.parseDocument(text);
  if (doc.errors.length) throw new FleetError(`is not YAML: ${doc.errors[0].message}`, { file });
  const clusters = doc.getIn(["config", CLUSTERS], true);
  if (!YAML.isSeq(clusters)) throw new FleetError(`has no ${CLUSTERS} list`, { file, field: CLUSTERS });
  const entry = clusters.items.find((item) => YAML.isMap(item) && item.get("name") === cluster);
  if (!YAML.isMap(entry)) {
    const names = clusters.items.flatMap((item) => (YAML.isMap(item) ? [String(item.get("name"))] : []));
    throw new FleetError(`has no cluster ${JSON.stringify(cluster)} (its clusters: ${names.join(", ") || "none"})`, { file, field: CLUSTERS });
  }
  if (pause) entry.set("paused", doc.createNode(pause));
  else entry.delete("paused");
  return doc.toString({ lineWidth: 0 });
}
