/**
 * No import circles: the program's files (index.ts, components/, core/, automation/, scripts/) import
 * one another in one direction only. A circle, type-only imports included, means two files each need
 * the other, so neither can be read, tested or moved alone; the shared name belongs lower down.
 * Relative imports only (`from "./x"`, `import("../x")`), resolved to x.ts or x/index.ts.
 */
import { expect } from "chai";
import { importGraph, relativeImports, tsFiles } from "../support/import-graph";

const ROOTS = ["index.ts", "components", "core", "automation", "scripts"];

/** The strongly connected components of more than one file, or of one file importing itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do component.push((member = stack.pop()!));
    while (member !== file);
    if (component.length > 1 || graph.get(file)?.includes(file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe("no import circles", () => {
  it("finds a circle when there is one (the check can fail)", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
      ["e.ts", ["e.ts"]],
    ]);
    expect(circles(graph)).to.deep.equal([["a.ts", "b.ts", "c.ts"], ["e.ts"]]);
  });

  it("reads type imports, re-exports and import() calls, not strings or comments", () => {
    const text = [
      'import type { A } from "./a";',
      'export { B } from "../b";',
      'const c = await import("./c");',
      'import * as fs from "node:fs";',
      'const glob = "src/**/*.ts"; // not "./d"',
      'import { E } from "./e";',
    ].join("\n");
    expect(relativeImports(text)).to.deep.equal(["./a", "../b", "./c", "./e"]);
  });

  it("the program's files import one another in one direction only", () => {
    const graph = importGraph(ROOTS.flatMap(tsFiles));
    const report = circles(graph).map((files) => {
      const ties = files.flatMap((f) =>
        graph
          .get(f)!
          .filter((t) => files.includes(t))
          .map((t) => `    ${f} -> ${t}`),
      );
      return [`  ${files.join(", ")}`, ...ties].join("\n");
    });
    if (report.length) expect.fail(`${report.length} import circle(s):\n${report.join("\n")}`);
  });
});
