/**
 * The program's relative imports as a graph of files, read with TypeScript's own pre-processor (imports,
 * type-only ones too, re-exports and import() calls; never strings or comments). The import tests
 * (no-import-circles, core-floors) hold their rules against it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";

export const ROOT = path.resolve(__dirname, "../..");

/** The TypeScript files of an entry (a file, or a folder read whole), as paths from the repository's root. */
export function tsFiles(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (!fs.statSync(full).isDirectory()) return entry.endsWith(".ts") ? [entry] : [];
  return fs
    .readdirSync(full)
    .sort()
    .flatMap((name) => tsFiles(path.join(entry, name)));
}

function resolveImport(from: string, spec: string): string | undefined {
  const base = path.join(path.dirname(from), spec);
  return [`${base}.ts`, path.join(base, "index.ts")].find((f) => fs.existsSync(path.join(ROOT, f)));
}

/** The relative module names a source text imports: imports (type-only too), re-exports, import() calls. */
export function relativeImports(text: string): string[] {
  return ts
    .preProcessFile(text, true, false)
    .importedFiles.map((f) => f.fileName)
    .filter((s) => s.startsWith("./") || s.startsWith("../"));
}

/** Each file's relative imports that resolve to a TypeScript file of this tree. */
export function importGraph(files: string[]): Map<string, string[]> {
  return new Map(
    files.map((file) => {
      const targets = relativeImports(fs.readFileSync(path.join(ROOT, file), "utf8"))
        .map((s) => resolveImport(file, s))
        .filter((f): f is string => f !== undefined);
      return [file, [...new Set(targets)]];
    }),
  );
}
