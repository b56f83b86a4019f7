/**
 * Where a render error happened, from the renderer's own words: Helm names the template and line
 * ("template: <chart>/templates/x.yaml:12:3: executing ..."; "parse error at (<chart>/templates/x.yaml:9): ..."),
 * and a raw manifest's YAML error names the file ("error while running post render on files: cm.yaml:
 * yaml: line 4: ..."). The error is then labelled with that file, relative to the repository where the
 * chart or manifest is in it, instead of the bundle's fleet.yaml; on one line. Pure.
 */
import * as path from "node:path";
import type { BundleStyle } from "../bundles/types";

export interface RenderErrorWhere {
  /** The file, relative to the repository root (a remote chart's: as Helm names it, `<chart>/templates/x.yaml`). */
  file?: string;
  line?: number;
  /** The error without the location it names. */
  reason: string;
}

// A chart's file as Helm names it: the chart's name, its subcharts, then templates/ (Go template names).
const TEMPLATE = /(?:template: )?\(?([\w.-]+(?:\/charts\/[\w.-]+)*\/templates\/[^\s:()"]+):(\d+)(?::(\d+))?\)?:?\s*/;
const POST_RENDER = /^error while running post render on files: ([^\s:]+): yaml: line (\d+): (.*)$/s;

/**
 * @param bundlePath the bundle's directory relative to the repository root ("" for the root)
 * @param style how the bundle renders (a chart inside the bundle gives its templates a path in the repository)
 */
export function renderErrorWhere(error: string, bundlePath: string, style: BundleStyle): RenderErrorWhere {
  const text = error.replace(/\s*\n\s*/g, " ").trim();
  const join = (...parts: string[]) => path.posix.normalize(path.posix.join(...parts.filter((p) => p)));
  const raw = POST_RENDER.exec(text);
  if (raw) return { file: join(bundlePath, raw[1]), line: Number(raw[2]), reason: `YAML: ${raw[3]}` };
  const t = TEMPLATE.exec(text);
  if (!t) return { reason: text };
  const [whole, helmName, line, column] = t;
  const inChart = helmName.slice(helmName.indexOf("/") + 1);
  // A chart inside the bundle (read.ts determineStyle gives it a path); a remote one keeps Helm's name.
  const file = style.kind === "helm" && style.path !== undefined ? join(bundlePath, style.path, inChart) : helmName;
  // The location Helm put first is now the label; elsewhere in the text (a parse error's) it stays.
  const reason = (t.index === 0 ? text.slice(whole.length) : text).trim();
  return { file, line: Number(line), reason: `${column ? `column ${column}: ` : ""}${reason}` };
}
