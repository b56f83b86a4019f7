/**
 * YAML text as the repository's files hold it (fleet.yaml, values files, manifests): its syntax
 * checked with file and line, duplicate keys refused as Go's decoding refuses them, aliases bounded.
 * What the data means is read by Fleet's own decoding (goyaml.ts); this only says whether it parses.
 *
 * This parser runs in the operation's own process, shared by every GitRepo, so what a text may make it
 * do is budgeted before and while the library reads it (YamlBudget): its size before parsing (the
 * library's AST costs about 100-300 bytes of heap per byte of text: 900 KB of 100,000 documents took
 * 3.7 s and 300 MB), its documents as they are composed, and its nodes with aliases expanded (counted
 * on the AST, each node once) before anything expands them; the library's own alias check stays behind.
 */
import * as YAML from "yaml";
import { FleetError } from "./errors";
import { positiveNumber } from "./operator-env";

export interface YamlBudget {
  /** One text, bytes (PULUMI_FLEET_MAX_YAML_MIB, default 2: Fleet stores a bundle's files in its Bundle resource, limited by etcd's 1.5 MiB). */
  bytes: number;
  /** Documents in one text. */
  documents: number;
  /** Flow collections (`[`, `{`) nested in one text: the library recurses per level (1,000,000 levels took 13 s to fail). */
  depth: number;
  /** Nodes of one text once its aliases are expanded, all documents together (as fleet-render's and fleet-sops's maxExpandedNodes). */
  expandedNodes: number;
}

export const DEFAULT_YAML_BUDGET: YamlBudget = { bytes: 2 * 1024 * 1024, documents: 1000, depth: 512, expandedNodes: 1_000_000 };

export function yamlBudget(env: NodeJS.ProcessEnv = process.env): YamlBudget {
  const d = DEFAULT_YAML_BUDGET;
  return { ...d, bytes: Math.floor(positiveNumber(env, "PULUMI_FLEET_MAX_YAML_MIB", d.bytes / 1024 / 1024) * 1024 * 1024) };
}

/**
 * The documents of a YAML text as the library composes them (aliases unexpanded), one at a time, within
 * the budget's size, nesting and document count: the one way content's YAML reaches the library here.
 */
export function* budgetedDocuments(text: string, file: string, budget: YamlBudget, lineCounter?: YAML.LineCounter): Generator<YAML.Document.Parsed> {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > budget.bytes)
    throw new FleetError(
      `YAML text of ${(bytes / 1024 / 1024).toFixed(1)} MiB, over the limit of ${budget.bytes / 1024 / 1024} MiB per YAML file read by the runner (PULUMI_FLEET_MAX_YAML_MIB)`,
      { file },
    );
  if (flowDepth(text, budget.depth) > budget.depth)
    throw new FleetError(
      `YAML flow collections ([ ], { }) nested more than ${budget.depth} levels deep: the limit bounds what one file may make the runner parse`,
      {
        file,
      },
    );
  // Duplicate keys are checked by the caller in one pass: the parser's own check (uniqueKeys) compares
  // each key with every earlier one, and a values file of 40,000 keys took 25 s.
  const composer = new YAML.Composer({ uniqueKeys: false });
  let count = 0;
  for (const doc of composer.compose(new YAML.Parser(lineCounter?.addNewLine).parse(text))) {
    if (++count > budget.documents)
      throw new FleetError(`more than ${budget.documents} YAML documents: the limit bounds what one file may make the runner parse`, { file });
    yield doc;
  }
}

/**
 * The yaml package's syntax error on one line, its position given as the error's line (and here the
 * column): "Implicit keys need to be on a single line at line 1, column 4:\n\n<snippet>" reads
 * "Implicit keys need to be on a single line (column 4)", not a first line ending in a dangling colon.
 */
export function yamlSyntaxText(message: string): string {
  const first = message.split("\n")[0].trim();
  const at = / at line \d+, column (\d+):?$/.exec(first);
  const text = (at ? first.slice(0, at.index) : first).replace(/:+$/, "").trim();
  return at ? `${text} (column ${at[1]})` : text;
}

/** One YAML document of ours (a stack file): a syntax error names the file and line, on one line. */
export function parseYamlFile(text: string, file: string): unknown {
  try {
    return YAML.parse(text);
  } catch (err) {
    if (!(err instanceof YAML.YAMLError)) throw err;
    throw new FleetError(`invalid YAML: ${yamlSyntaxText(err.message)}`, { file, ...(err.linePos ? { line: err.linePos[0].line } : {}) });
  }
}

/** Parses YAML text, reporting syntax errors with file and line; over a budget, an error naming it. */
export function parseYamlDocuments(text: string, file: string, budget: YamlBudget = yamlBudget()): unknown[] {
  const lineCounter = new YAML.LineCounter();
  const out: unknown[] = [];
  let expanded = 0;
  for (const doc of budgetedDocuments(text, file, budget, lineCounter)) {
    const err = doc.errors[0];
    if (err) {
      const line = err.pos ? lineCounter.linePos(err.pos[0]).line : undefined;
      throw new FleetError(`invalid YAML: ${yamlSyntaxText(err.message)}`, { file, line });
    }
    const duplicate = firstDuplicateKey(doc.contents);
    if (duplicate)
      throw new FleetError("invalid YAML: Map keys must be unique", { file, line: duplicate.range ? lineCounter.linePos(duplicate.range[0]).line : undefined });
    expanded += expandedNodes(doc, budget.expandedNodes - expanded);
    if (expanded > budget.expandedNodes)
      throw new FleetError(
        `invalid YAML: it holds more than ${budget.expandedNodes} nodes once its aliases are expanded (an alias bomb?); the limit bounds what one file may expand to`,
        { file },
      );
    try {
      out.push(doc.toJS({ maxAliasCount: 1000 }));
    } catch (e) {
      // The yaml package's bound on alias expansion, behind the count above.
      throw new FleetError(`invalid YAML: ${(e as Error).message}`, { file });
    }
  }
  return out;
}

/**
 * A document's nodes as toJS would expand them, each distinct node counted once (memoized), with an
 * explicit stack: linear in the AST whatever its depth or aliases; stops past `max`.
 */
function expandedNodes(doc: YAML.Document.Parsed, max: number): number {
  const size = new Map<unknown, number>();
  const target = aliasTargets(doc);
  const childrenOf = (node: unknown): unknown[] => {
    if (YAML.isAlias(node)) return [target.get(node)];
    if (YAML.isMap(node)) return node.items.flatMap((p) => [p.key, p.value]);
    if (YAML.isSeq(node)) return node.items;
    return [];
  };
  // Post-order: a node's size once its children's are known; an alias cycle counts as too large.
  const stack: { node: unknown; open: boolean }[] = [{ node: doc.contents, open: false }];
  while (stack.length) {
    const top = stack[stack.length - 1];
    if (size.has(top.node) && !top.open) {
      stack.pop();
      continue;
    }
    if (!top.open) {
      top.open = true;
      size.set(top.node, max + 1); // seen: reached again before it closes means a cycle
      for (const c of childrenOf(top.node)) if (c !== null && c !== undefined && !size.has(c)) stack.push({ node: c, open: false });
      continue;
    }
    stack.pop();
    let n = 1;
    for (const c of childrenOf(top.node)) n += c === null || c === undefined ? 0 : (size.get(c) ?? 0);
    size.set(top.node, Math.min(n, max + 1));
  }
  return size.get(doc.contents) ?? 0;
}

/**
 * How deeply `[` and `{` nest in the text; stops past `max`. An upper bound: a bracket inside a
 * string or a comment counts too, so no quoting can hide nesting from it (a real file's strings
 * rarely leave 512 brackets open).
 */
function flowDepth(text: string, max: number): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length && deepest <= max; i++) {
    const c = text[i];
    if (c === "[" || c === "{") {
      deepest = Math.max(deepest, ++depth);
    } else if ((c === "]" || c === "}") && depth > 0) {
      depth--;
    }
  }
  return deepest;
}

/**
 * Each alias's node: the latest anchor of its name before it, as the library resolves it, found in one
 * pass (the library's own Alias.resolve walks the whole document for each alias: 5,000 aliases took 97 s).
 */
function aliasTargets(doc: YAML.Document.Parsed): Map<YAML.Alias, unknown> {
  const anchors = new Map<string, unknown>();
  const out = new Map<YAML.Alias, unknown>();
  // Document order: a node before its children, children left to right (explicit stack, reversed pushes).
  const stack: unknown[] = [doc.contents];
  while (stack.length) {
    const node = stack.pop();
    if (YAML.isAlias(node)) {
      out.set(node, anchors.get(node.source));
      continue;
    }
    if ((YAML.isScalar(node) || YAML.isCollection(node)) && node.anchor) anchors.set(node.anchor, node);
    const children = YAML.isMap(node) ? node.items.flatMap((p) => [p.key, p.value]) : YAML.isSeq(node) ? node.items : [];
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return out;
}

/**
 * The first scalar key that repeats an earlier key of its mapping (as Go's YAML decoding refuses), found
 * with a set per mapping and an explicit stack: linear in the document, whatever its depth.
 */
function firstDuplicateKey(root: unknown): YAML.Scalar | undefined {
  const stack: unknown[] = [root];
  while (stack.length) {
    const node = stack.pop();
    if (YAML.isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        if (YAML.isScalar(pair.key)) {
          const id = `${typeof pair.key.value}:${String(pair.key.value)}`;
          if (seen.has(id)) return pair.key;
          seen.add(id);
        }
        stack.push(pair.value);
      }
    } else if (YAML.isSeq(node)) {
      stack.push(...node.items);
    }
  }
  return undefined;
}
