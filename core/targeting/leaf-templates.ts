/**
 * A fast path for Fleet's helm values templating that gives exactly what rendering the whole values
 * text and parsing it as YAML gives, without the parse: when every `${ }` action sits inside one string
 * value, each such value can be rendered on its own and put back as the scalar the YAML parser would
 * have read. Parsing the rendered text of every (bundle, cluster) was most of the plan's time at
 * fleet scale. Whenever equivalence is not certain (an action in a key, spanning values, trimming
 * whitespace, a rendered value that would not stay one scalar), the caller takes the full path.
 */
import * as YAML from "yaml";
import { compileTemplate, CompiledTemplate } from "./gotemplate";

type Style = "plain" | "double" | "single";

interface Leaf {
  path: (string | number)[];
  template: CompiledTemplate;
  style: Style;
}

export interface LeafTemplates {
  /** Renders every templated value; undefined when some rendered value needs the full path. */
  render(values: Record<string, unknown>, data: unknown): Record<string, unknown> | undefined;
}

/** Undefined when the values do not qualify for the fast path. */
export function compileLeafTemplates(values: Record<string, unknown>, yamlOptions: YAML.DocumentOptions): LeafTemplates | undefined {
  const leaves: Leaf[] = [];
  const walk = (node: unknown, path: (string | number)[]): boolean => {
    if (typeof node === "string") {
      if (!node.includes("${")) return true;
      if (/\$\{-|-\}/.test(node)) return false; // trim markers reach into the surrounding YAML text
      const style = styleOf(node, yamlOptions);
      if (!style) return false;
      try {
        leaves.push({ path, template: compileTemplate(node), style });
      } catch {
        return false; // an action that does not close inside this value
      }
      return true;
    }
    if (Array.isArray(node)) return node.every((item, i) => walk(item, [...path, i]));
    if (node && typeof node === "object") {
      return Object.entries(node).every(([k, v]) => !k.includes("${") && walk(v, [...path, k]));
    }
    return true;
  };
  if (!walk(values, [])) return undefined;
  const scalars = new Map<string, unknown>();
  return {
    render(source, data) {
      const out = cloneTree(source) as Record<string, unknown>;
      for (const leaf of leaves) {
        const text = leaf.template.render(data);
        const value = scalarValue(text, leaf.style, scalars, yamlOptions);
        if (value === NOT_SAFE) return undefined;
        let parent: any = out;
        for (const key of leaf.path.slice(0, -1)) parent = parent[key];
        parent[leaf.path[leaf.path.length - 1]] = value;
      }
      return out;
    },
  };
}

/**
 * How the YAML writer emits this string as a block value, when it emits it verbatim (plain, or inside
 * quotes with nothing escaped): only then does the whole-text template see the same characters.
 */
function styleOf(s: string, yamlOptions: YAML.DocumentOptions): Style | undefined {
  const text = YAML.stringify(s, { ...yamlOptions, lineWidth: 0 }).replace(/\n$/, "");
  if (text === s) return "plain";
  if (text === `"${s}"`) return "double";
  if (text === `'${s}'`) return "single";
  return undefined;
}

const NOT_SAFE = Symbol("not safe");
const INDICATOR = /^[-?:,[\]{}#&*!|>'"%@`]/;
const YAML11_WORDS = new Set(["y", "n", "yes", "no", "on", "off", "true", "false", "null"]);

/** The value the YAML parser reads when `text` stands where the template was, or NOT_SAFE. */
function scalarValue(text: string, style: Style, cache: Map<string, unknown>, yamlOptions: YAML.DocumentOptions): unknown {
  if (text.includes("\n") || text.includes("\r")) return NOT_SAFE;
  if (style === "double") return /["\\]/.test(text) ? NOT_SAFE : text;
  if (style === "single") return text.includes("'") ? NOT_SAFE : text;
  if (text === "" || text !== text.trim() || INDICATOR.test(text) || text.includes(": ") || text.includes(" #") || text.endsWith(":") || text.includes("\t")) {
    return NOT_SAFE;
  }
  // Starting with a letter, these characters only, and not a YAML 1.1 boolean or null: a string.
  if (/^[A-Za-z][A-Za-z0-9_./-]*$/.test(text) && !YAML11_WORDS.has(text.toLowerCase())) return text;
  // Otherwise it may resolve to a number, boolean or null: ask the parser, once per text.
  if (!cache.has(text)) cache.set(text, YAML.parse(text, yamlOptions));
  const v = cache.get(text);
  return v !== null && typeof v === "object" ? NOT_SAFE : v;
}

/** A copy of a JSON-like tree (strings are immutable, so only containers are copied); faster than structuredClone for small trees. */
function cloneTree(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(cloneTree);
  if (node && typeof node === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(node)) out[k] = cloneTree((node as Record<string, unknown>)[k]);
    return out;
  }
  return node;
}
