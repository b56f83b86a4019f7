/**
 * core/ stands in floors (docs/architecture.md, "Core's floors"): every file lies in a stage folder,
 * and a folder imports only folders on floors below its own, type-only imports included. core/model/,
 * the shared words, imports nothing else of core. A new folder must be given its floor here; a name
 * two floors need belongs on the lower one.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { importGraph, ROOT, tsFiles } from "../support/import-graph";

const FLOORS: Record<string, number> = {
  model: 1,
  base: 1,
  config: 2,
  renderer: 2,
  agent: 3,
  bundles: 3,
  source: 4,
  targeting: 4,
  import: 4,
  schema: 4,
  render: 5,
  plan: 6,
  desired: 7,
  migrate: 8,
};

/** The core folder a file lies in ("" for a file at core's root); undefined outside core. */
function folderOf(file: string): string | undefined {
  const parts = file.split(path.sep);
  if (parts[0] !== "core") return undefined;
  return parts.length > 2 ? parts[1] : "";
}

/** Every import that breaks the floors: out of an unknown folder or core's root, sideways, or upward; model's out of model. */
function floorProblems(graph: Map<string, string[]>, floors: Record<string, number>): string[] {
  const problems: string[] = [];
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    if (from === undefined) continue;
    if (!(from in floors)) {
      problems.push(`${file}: ${from ? `folder core/${from}/ has no floor` : "a file at core's root"}`);
      continue;
    }
    for (const target of targets) {
      const to = folderOf(target);
      if (to === undefined || to === from) continue;
      if (from === "model") problems.push(`${file} -> ${target}: core/model/ imports nothing else of core`);
      else if (!(to in floors) || floors[to] >= floors[from]) problems.push(`${file} -> ${target}: floor ${floors[from]} imports floor ${floors[to] ?? "?"}`);
    }
  }
  return problems;
}

describe("core's floors", () => {
  it("finds an import that runs up or sideways, one out of model, and a loose file (the check can fail)", () => {
    const graph = new Map([
      [path.join("core", "targeting", "plan.ts"), [path.join("core", "desired", "keys.ts"), path.join("core", "model", "keys.ts")]],
      [path.join("core", "model", "pair.ts"), [path.join("core", "config", "health-checks.ts")]],
      [path.join("core", "config", "shards.ts"), [path.join("core", "renderer", "fleet-render.ts")]],
      [path.join("core", "pipeline.ts"), []],
      [path.join("automation", "operations.ts"), [path.join("core", "desired", "state.ts")]],
    ]);
    expect(floorProblems(graph, FLOORS)).to.deep.equal([
      `${path.join("core", "targeting", "plan.ts")} -> ${path.join("core", "desired", "keys.ts")}: floor 4 imports floor 7`,
      `${path.join("core", "model", "pair.ts")} -> ${path.join("core", "config", "health-checks.ts")}: core/model/ imports nothing else of core`,
      `${path.join("core", "config", "shards.ts")} -> ${path.join("core", "renderer", "fleet-render.ts")}: floor 2 imports floor 2`,
      `${path.join("core", "pipeline.ts")}: a file at core's root`,
    ]);
  });

  it("every folder of core has a floor, and each imports only folders below it", () => {
    const folders = fs
      .readdirSync(path.join(ROOT, "core"), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.filter((f) => !(f in FLOORS))).to.deep.equal([]);
    expect(floorProblems(importGraph(tsFiles("core")), FLOORS)).to.deep.equal([]);
  });
});
