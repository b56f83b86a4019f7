/**
 * Reads a Prometheus text exposition with Prometheus's own parser (tools/metrics-check: expfmt's
 * TextParser, plus the checks node_exporter's textfile collector and the Pushgateway make after
 * parsing). Throws with the parser's words on anything it refuses.
 */
import { spawnSync } from "node:child_process";
import { builtToolPath } from "../../core/base/tool-build";

export interface ParsedFamily {
  name: string;
  help: string;
  type: string;
  samples: { labels: Record<string, string>; value: string }[];
}

let bin: string | undefined;

export function parseExposition(text: string): ParsedFamily[] {
  bin ??= builtToolPath("build-metrics-check.sh", "metrics-check (Prometheus's text parser)");
  const r = spawnSync(bin, ["-"], { input: text, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`Prometheus's parser refused the exposition: ${(r.stderr || r.error?.message || "").trim()}`);
  return JSON.parse(r.stdout) as ParsedFamily[];
}

/** The value of the one sample of `name` whose labels include `labels` (undefined: none); two matches are an error. */
export function sampleValue(families: ParsedFamily[], name: string, labels: Record<string, string>): number | undefined {
  const matches = (families.find((f) => f.name === name)?.samples ?? []).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (matches.length > 1) throw new Error(`${name}${JSON.stringify(labels)} matches ${matches.length} samples`);
  return matches.length ? Number(matches[0].value) : undefined;
}
