/**
 * fleet.yaml and values files read as Fleet reads them: YAML to JSON by sigs.k8s.io/yaml in
 * fleet-render (YAML 1.1: `enabled: yes` is true, `port: 010` is 8, a key `n` is "false"), then the
 * data. The JavaScript parser still reads each text first, for its syntax errors with line numbers.
 * One fleet-render call per batch of texts.
 */
import { FleetError } from "../errors";
import { runRenderer } from "../render/fleet-render";
import { parseYamlDocuments } from "./fleetyaml";

export interface YamlText { key: string; text: string; file: string }

/** The first document of each text as Fleet sees it, by key. Syntax errors name the file and line. */
export function readYamlAsFleet(texts: YamlText[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (!texts.length) return out;
  for (const t of texts) parseYamlDocuments(t.text, t.file);
  const response = runRenderer({ yaml: Object.fromEntries(texts.map((t) => [t.key, t.text])) }).yaml;
  for (const t of texts) {
    const r = response[t.key];
    if (!r || r.error) throw new FleetError(`invalid YAML: ${r?.error ?? "fleet-render returned nothing"}`, { file: t.file });
    out.set(t.key, r.json ?? null);
  }
  return out;
}
