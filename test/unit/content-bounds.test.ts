/**
 * Work that GitRepo content makes the reader do is bounded, and counted rather than timed:
 * .fleetignore patterns parsed once, their matching bounded per checkout (PULUMI_FLEET_MAX_IGNORE_STEPS),
 * and chart dependency names compared as strings, never made into regular expressions.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { isArchiveOf, namesChart } from "../../core/bundles/chart-deps";
import { Checkout, DEFAULT_CONTENT_LIMITS } from "../../core/bundles/checkout";
import { readBundleFiles } from "../../core/bundles/content";
import { discoverBundleDirs } from "../../core/bundles/discover";
import { checkFleetYamlText } from "../../core/bundles/fleetyaml";
import { DEFAULT_YAML_BUDGET, parseYamlDocuments, yamlBudget } from "../../core/base/yaml-documents";
import * as goGlob from "../../core/bundles/go-glob";
import { FleetError } from "../../core/base/errors";
import { tempDir } from "../support/git-fixtures";

function treeOf(files: Record<string, string>): string {
  const dir = tempDir("pf-bounds-");
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

const ctx = { gitRepo: "repo", bundle: "b" };
const manyFiles = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}.yaml`, "a: b\n"]));

/** Counts the patterns compiled while `f` runs (the reader calls compileGoPattern through its module). */
function compilesDuring(f: () => void): number {
  const original = goGlob.compileGoPattern;
  let calls = 0;
  (goGlob as { compileGoPattern: typeof original }).compileGoPattern = (...args) => (calls++, original(...args));
  try {
    f();
  } finally {
    (goGlob as { compileGoPattern: typeof original }).compileGoPattern = original;
  }
  return calls;
}

describe("bounds on the work content causes while read", () => {
  it("a .fleetignore line is parsed once for the directory, not once per file", () => {
    const dir = treeOf({ ...manyFiles(200), ".fleetignore": "*.json\nf1?.yaml\nf7.yaml\n" });
    let files: string[] = [];
    const compiles = compilesDuring(() => (files = readBundleFiles(new Checkout(dir, "repo"), "", [], ctx).map((f) => f.name)));
    expect(compiles).to.equal(3);
    expect(files)
      .to.have.length(200 - 10 - 1)
      .and.not.include("f7.yaml")
      .and.not.include("f12.yaml");
  });

  it("the matching work does not grow with a line's length: a line longer than any file name matches nothing", () => {
    const stepsFor = (line: string) => {
      const checkout = new Checkout(treeOf({ ...manyFiles(50), ".fleetignore": `${line}\n` }), "repo");
      expect(readBundleFiles(checkout, "", [], ctx)).to.have.length(50);
      return checkout.ignoreMatching.steps;
    };
    const short = stepsFor("*a".repeat(300) + "b");
    expect(stepsFor("*a".repeat(2_000_000) + "b")).to.equal(short);
    expect(stepsFor("x".repeat(4_000_000))).to.equal(short);
    expect(stepsFor("absent.yaml")).to.equal(0); // a name without a wildcard: a set lookup
  });

  it("many patterns against many names stop at PULUMI_FLEET_MAX_IGNORE_STEPS, naming the GitRepo, bundle and file", () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `*${i}?z`).join("\n");
    const dir = treeOf({ ...manyFiles(100), ".fleetignore": lines });
    const checkout = new Checkout(dir, "repo", { ...DEFAULT_CONTENT_LIMITS, ignoreSteps: 50_000 });
    let err: unknown;
    try {
      readBundleFiles(checkout, "", [], ctx);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(FleetError);
    expect((err as FleetError).message)
      .to.contain("PULUMI_FLEET_MAX_IGNORE_STEPS")
      .and.contain("gitRepo repo")
      .and.contain("bundle b");
    expect((err as FleetError).context.file).to.match(/^f\d+\.yaml$/);
  });

  it("a directory is looked up once: the lstat calls of a walk grow with the tree, not with depth cubed", () => {
    const lstats = (depth: number) => {
      const chain = Array.from({ length: depth }, () => "d").join("/");
      const checkout = new Checkout(treeOf({ "cm.yaml": "a: b\n", [`${chain}/cm.yaml`]: "a: b\n" }), "repo");
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module object itself (writable), not the import's frozen namespace
      const nodeFs = require("node:fs") as { lstatSync: typeof fs.lstatSync };
      const original = nodeFs.lstatSync;
      let calls = 0;
      nodeFs.lstatSync = ((...args: Parameters<typeof original>) => (calls++, original(...args))) as typeof original;
      try {
        expect(discoverBundleDirs(checkout, [])).to.deep.equal(["."]);
        expect(readBundleFiles(checkout, ".", [], ctx)).to.have.length(2);
      } finally {
        nodeFs.lstatSync = original;
      }
      return calls;
    };
    const [at20, at40] = [lstats(20), lstats(40)];
    expect(at40).to.be.lessThan(2.5 * at20); // linear in the directories (was about 8x: depth cubed)
  });

  it("a path deeper than PULUMI_FLEET_MAX_PATH_DEPTH fails the GitRepo's read naming it, in discovery and in a bundle's files", () => {
    const chain = Array.from({ length: 6 }, () => "d").join("/");
    const dir = treeOf({ "cm.yaml": "a: b\n", [`${chain}/cm.yaml`]: "a: b\n" });
    const limits = { ...DEFAULT_CONTENT_LIMITS, pathDepth: 5 };
    const errorOf = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return err as FleetError;
      }
      throw new Error("expected an error");
    };
    for (const err of [
      errorOf(() => discoverBundleDirs(new Checkout(dir, "repo", limits), [])),
      errorOf(() => readBundleFiles(new Checkout(dir, "repo", limits), ".", [], ctx)),
    ]) {
      expect(err).to.be.instanceOf(FleetError);
      expect(err.message).to.contain("gitRepo repo").and.contain("more than 5 directories deep (limit PULUMI_FLEET_MAX_PATH_DEPTH)");
      expect(err.context.file).to.match(/^d\/d\/d\/d\/d\/[^/]+$/); // the first path past the limit
    }
    expect(new Checkout(dir, "repo", { ...limits, pathDepth: 7 }).kindOf(`${chain}/cm.yaml`)).to.equal("file");
  });

  it("a chart dependency's name is compared as a string, never run as a regular expression", () => {
    const evil = "(a+)+$";
    const chartYaml = `apiVersion: v2\nname: ${"a".repeat(40)}!\n`;
    const t = process.hrtime.bigint();
    expect(namesChart(chartYaml, evil)).to.equal(false);
    expect(isArchiveOf(`${"a".repeat(40)}!-1.0.0.tgz`, evil)).to.equal(false);
    expect(Number(process.hrtime.bigint() - t) / 1e6).to.be.lessThan(100);
    expect(namesChart('name: "my.chart"\r\n', "my.chart")).to.equal(true);
    expect(namesChart("name: myXchart\n", "my.chart")).to.equal(false); // `.` is no wildcard
    expect(namesChart("  name: my.chart\n", "my.chart")).to.equal(false); // a nested key, not the chart's name
    expect(isArchiveOf("redis-17.3.1.tgz", "redis")).to.equal(true);
    expect(isArchiveOf("redis-v17.tgz", "redis")).to.equal(true);
    expect(isArchiveOf("redis-latest.tgz", "redis")).to.equal(false);
    expect(isArchiveOf("redis-1.tgz/x", "redis")).to.equal(false);
  });

  describe("the runner's YAML parser (fleet.yaml, values files): budgets before the library sees a text", () => {
    const refusal = (text: string, budget = DEFAULT_YAML_BUDGET) => {
      const t = Date.now();
      try {
        parseYamlDocuments(text, "team/app/values.yaml", budget);
      } catch (err) {
        expect(err).to.be.instanceOf(FleetError);
        expect((err as FleetError).context.file).to.equal("team/app/values.yaml");
        return { message: (err as FleetError).message, ms: Date.now() - t };
      }
      throw new Error("expected a refusal");
    };
    const nested = (levels: string[]) =>
      levels
        .map((l, i) =>
          i === 0
            ? `${l}: &${l} [${Array(9).fill('"lol"').join(",")}]`
            : `${l}: &${l} [${Array(9)
                .fill(`*${levels[i - 1]}`)
                .join(",")}]`,
        )
        .join("\n");

    it("a text over PULUMI_FLEET_MAX_YAML_MIB is refused before it is parsed, however it is shaped", () => {
      expect(yamlBudget({ PULUMI_FLEET_MAX_YAML_MIB: "0.5" }).bytes).to.equal(512 * 1024);
      const big = Array.from({ length: 300_000 }, (_, i) => `k${i}: v`).join("\n"); // 3 MB: 5 s and 370 MB in the library
      const r = refusal(big);
      expect(r.message).to.contain("over the limit of 2 MiB per YAML file read by the runner (PULUMI_FLEET_MAX_YAML_MIB)");
      expect(r.ms).to.be.lessThan(500);
    });

    it("aliases: nested (billion laughs) and wide (one large list repeated) are refused by their expanded nodes, not expanded", () => {
      const laughs = refusal(nested(["a", "b", "c", "d", "e", "f", "g", "h", "i"]));
      expect(laughs.message).to.contain("more than 1000000 nodes once its aliases are expanded");
      // The library's own maxAliasCount counts aliases inside aliases: 600 uses of a 2,000-item list pass it.
      const wide = `a: &a [${Array(2000).fill("x").join(",")}]\n` + Array.from({ length: 600 }, (_, i) => `b${i}: *a`).join("\n");
      expect(refusal(wide).message).to.contain("more than 1000000 nodes once its aliases are expanded");
      // A cycle is not followed forever; within the budget, aliases are read as before.
      expect(parseYamlDocuments("x: &x {a: 1}\ny: [*x, *x]\n", "f")).to.deep.equal([{ x: { a: 1 }, y: [{ a: 1 }, { a: 1 }] }]);
    });

    it("documents and flow nesting are bounded; the errors name the file", () => {
      const docs = refusal(Array.from({ length: 100_000 }, () => "a: 1").join("\n---\n"));
      expect(docs.message).to.contain("more than 1000 YAML documents");
      expect(docs.ms).to.be.lessThan(2_000);
      const deep = refusal("[".repeat(1_000_000) + "]".repeat(1_000_000)); // 13 s in the library before it gave up
      expect(deep.message).to.contain("nested more than 512 levels deep");
      expect(deep.ms).to.be.lessThan(500);
      expect(parseYamlDocuments(`a: ${"[".repeat(100)}1${"]".repeat(100)}\n`, "f")).to.have.length(1);
    });

    it("fleet.yaml is read with the same budgets", () => {
      expect(() => checkFleetYamlText(nested(["a", "b", "c", "d", "e", "f", "g"]), "team/app/fleet.yaml")).to.throw(
        FleetError,
        "once its aliases are expanded",
      );
    });
  });
});
