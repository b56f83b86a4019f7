/**
 * The line of a field in a YAML file, from a FleetError's field path (`targets[0].helm.values`), for
 * errors a person can jump to (`fleet.yaml:12 targets[0].helm: ...`). The readers read data, not text,
 * so the line is found afterwards in the text's syntax tree (the yaml library's node ranges). Keys
 * are matched as the fleet.yaml reader matches them: exactly, else without regard to case.
 */
import * as YAML from "yaml";
import { budgetedDocuments, yamlBudget } from "../base/yaml-documents";

/** The path's segments: keys and list indexes. A key holding dots (a label key) is matched greedily below. */
function segments(field: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const part of field.split(".")) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) return [...out, part];
    if (m[1]) out.push(m[1]);
    for (const i of m[2].matchAll(/\[(\d+)\]/g)) out.push(Number(i[1]));
  }
  return out;
}

/**
 * The 1-based line of `field` in `text` (its deepest part that exists there), under `prefix` (the keys
 * the reader's root sits under: `["config"]` for a stack file); undefined when the text does not parse.
 */
export function lineOfField(text: string, field: string, prefix: string[] = []): number | undefined {
  const lineCounter = new YAML.LineCounter();
  let doc: YAML.Document.Parsed | undefined;
  try {
    // The one gate content's YAML passes (size, nesting and document budgets): the file named by an
    // error may be one only the renderer read, never parsed here under those budgets before.
    doc = budgetedDocuments(text, "", yamlBudget(), lineCounter).next().value ?? undefined;
  } catch {
    return undefined;
  }
  if (!doc || doc.errors.length) return undefined;
  const parts = [...prefix, ...segments(field)];
  let node: unknown = doc.contents;
  let at: number | undefined = undefined;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (typeof part === "number") {
      if (!YAML.isSeq(node) || part >= node.items.length) break;
      node = node.items[part];
      at = rangeStart(node) ?? at;
      continue;
    }
    if (!YAML.isMap(node)) break;
    const found = findKey(node, parts, i);
    if (!found) break;
    i = found.last;
    at = rangeStart(found.pair.key) ?? at;
    node = found.pair.value;
  }
  return at === undefined ? undefined : lineCounter.linePos(at).line;
}

/** The pair whose key is parts[i], or parts[i..j] joined by dots (a key holding dots); the longest exact match first, then any case. */
function findKey(map: YAML.YAMLMap, parts: (string | number)[], i: number): { pair: YAML.Pair; last: number } | undefined {
  const keyOf = (p: YAML.Pair) => (YAML.isScalar(p.key) ? String(p.key.value) : String(p.key));
  for (const sameCase of [true, false]) {
    for (let j = parts.length - 1; j >= i; j--) {
      if (parts.slice(i, j + 1).some((p) => typeof p === "number")) continue;
      const want = parts.slice(i, j + 1).join(".");
      const pair = map.items.find((p) => (sameCase ? keyOf(p) === want : keyOf(p).toLowerCase() === want.toLowerCase()));
      if (pair) return { pair, last: j };
    }
  }
  return undefined;
}

function rangeStart(node: unknown): number | undefined {
  return (node as { range?: [number, number, number] } | null)?.range?.[0];
}
