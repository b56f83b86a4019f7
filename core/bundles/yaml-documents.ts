/**
 * YAML text as the repository's files hold it (fleet.yaml, values files, manifests): its syntax
 * checked with file and line, duplicate keys refused as Go's decoding refuses them, aliases bounded.
 * What the data means is read by Fleet's own decoding (goyaml.ts); this only says whether it parses.
 */
import * as YAML from "yaml";
import { FleetError } from "../errors";

/** Parses YAML text, reporting syntax errors with file and line. */
export function parseYamlDocuments(text: string, file: string): unknown[] {
  // Duplicate keys are checked below in one pass: the parser's own check (uniqueKeys) compares each key
  // with every earlier one, and a values file of 40,000 keys took 25 s (content could hold the runner).
  const lineCounter = new YAML.LineCounter();
  const docs = YAML.parseAllDocuments(text, { uniqueKeys: false, lineCounter });
  const out: unknown[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    const err = doc.errors[0];
    if (err) {
      const line = err.linePos?.[0]?.line;
      throw new FleetError(`invalid YAML: ${err.message.split("\n")[0]}`, { file, line });
    }
    const duplicate = firstDuplicateKey(doc.contents);
    if (duplicate)
      throw new FleetError("invalid YAML: Map keys must be unique", { file, line: duplicate.range ? lineCounter.linePos(duplicate.range[0]).line : undefined });
    try {
      out.push(doc.toJS({ maxAliasCount: 1000 }));
    } catch (e) {
      // The yaml package's bound on alias expansion (an alias bomb).
      throw new FleetError(`invalid YAML: ${(e as Error).message}`, { file });
    }
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
