/**
 * validate's problem lines: one per cause, `file:line field: reason (bundle B, clusters C)`. A cause
 * shared by several clusters (a template that fails everywhere) is one line naming them all.
 */
import * as path from "node:path";
import { DeploymentFailure } from "../core/plan/failures";
import { lineOfField } from "../core/bundles/field-lines";

/**
 * @param textOf the text of a file of a GitRepo, for the line of the field it names (undefined: no line)
 * @param shownDir a GitRepo's directory as the user named it, prefixed to its files, or ""
 */
export function problemLines(
  failed: DeploymentFailure[],
  textOf: (gitRepo: string, file: string) => string | undefined,
  shownDir: (gitRepo: string) => string,
): string[] {
  const byCause = new Map<string, { head: string; bundle: string; clusters: string[] }>();
  for (const f of failed) {
    if (f.held) continue;
    const head = f.file
      ? `${location({ ...f, file: f.file }, (file) => textOf(f.gitRepo, file), shownDir(f.gitRepo))}${f.field ? ` ${f.field}` : ""}: ${f.reason}`
      : f.reason;
    const key = `${f.gitRepo}\0${f.bundle}\0${head}`;
    const cause = byCause.get(key) ?? { head, bundle: f.bundle, clusters: [] };
    if (f.cluster) cause.clusters.push(f.cluster);
    byCause.set(key, cause);
  }
  return [...byCause.values()].map(
    (c) => `${c.head} (bundle ${c.bundle}${c.clusters.length ? `, cluster${c.clusters.length > 1 ? "s" : ""} ${c.clusters.join(", ")}` : ""})`,
  );
}

function location({ file, field, line: known }: DeploymentFailure & { file: string }, textOf: (file: string) => string | undefined, shownDir: string): string {
  const shown = shownDir ? path.join(shownDir, file) : file;
  if (known) return `${shown}:${known}`;
  if (!field) return shown;
  let text: string | undefined;
  try {
    text = textOf(file);
  } catch {
    return shown;
  }
  const line = text === undefined ? undefined : lineOfField(text, field);
  return line ? `${shown}:${line}` : shown;
}

/** A bundle's warning (`file: field: words`, as the fleet.yaml reader words them) with the field's line when it has one. */
export function warningLine(bundle: string, warning: string, textOf: (file: string) => string | undefined, shownDir: string): string {
  const m = /^([^\s:]+): ([^\s:]+): (.*)$/s.exec(warning);
  if (!m) return `warning: bundle ${bundle}: ${warning}`;
  const [, file, field, words] = m;
  return `${location({ file, field } as DeploymentFailure & { file: string }, textOf, shownDir)} ${field}: warning: ${words} (bundle ${bundle})`;
}
