/**
 * fleet.yaml and values files read as Fleet reads them: YAML to JSON by sigs.k8s.io/yaml in
 * fleet-render (YAML 1.1: `enabled: yes` is true, `port: 010` is 8, a key `n` is "false"), then the
 * data. Callers check each text's syntax with the JavaScript parser first, for errors with line numbers.
 * One fleet-render call per batch of texts.
 */
import { ErrorContext, FleetError } from "../base/errors";
import { runRenderer } from "../renderer/fleet-render";
import { Renderer } from "../model/renderer-protocol";

/** A text whose syntax the caller has checked with the JavaScript parser (for line numbers). */
export interface YamlText {
  key: string;
  text: string;
  file: string;
  ctx: ErrorContext;
}

/**
 * The first document of each text as Fleet sees it, by key; a failure names the text's file and context.
 * With `onError`, a text that fails is handed to it and left out instead (a broken bundle fails alone).
 */
export async function readYamlAsFleet(
  texts: YamlText[],
  render: Renderer = runRenderer,
  onError?: (t: YamlText, err: FleetError) => void,
): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  if (!texts.length) return out;
  const gitRepoOf = Object.fromEntries(texts.flatMap((t) => (t.ctx.gitRepo ? [[t.key, t.ctx.gitRepo]] : [])));
  const response = (await render({ yaml: Object.fromEntries(texts.map((t) => [t.key, t.text])), gitRepoOf: { yaml: gitRepoOf } })).yaml;
  for (const t of texts) {
    const r = response[t.key];
    if (!r || r.error) {
      const err = new FleetError(`invalid YAML: ${r?.error ?? "fleet-render returned nothing"}`, { ...t.ctx, file: t.file });
      if (!onError) throw err;
      onError(t, err);
      continue;
    }
    out.set(t.key, r.json ?? null);
  }
  return out;
}
