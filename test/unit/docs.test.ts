/**
 * The documentation's own rules, checked on every markdown file in git:
 * - every relative link reaches a file of this repository, and its #anchor a heading there; no link
 *   leaves the repository (no http(s) link, no path above its root);
 * - measured figures live in BENCHMARKS.md only: README and docs/ quote one only as a link into the
 *   BENCHMARKS.md section that states it (`[3.8 to 3.9 s](../BENCHMARKS.md#6-start-up-of-an-operation)`),
 *   whose text must appear there verbatim, so two pages cannot disagree.
 */
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "../..");
const markdown = execFileSync("git", ["ls-files", "*.md"], { cwd: ROOT, encoding: "utf8" })
  .split("\n")
  .filter(Boolean)
  .filter((f) => fs.existsSync(path.join(ROOT, f)));
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), "utf8");
/** Fenced code blocks and inline code are examples, not links or prose figures. */
const withoutFences = (text: string) => text.replace(/^```[\s\S]*?^```/gm, "");
const prose = (text: string) => withoutFences(text).replace(/`[^`\n]*`/g, "`…`");
const LINK = /\[([^\]]*)\]\(([^)\s]+)\)/g;

/** GitHub's heading anchors: lowercase, punctuation dropped, spaces to '-', repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of withoutFences(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .trim()
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  for (const m of text.matchAll(/<a id="([^"]+)"/g)) out.add(m[1]);
  return out;
}

/** The text of the section an anchor names, up to the next heading of the same or a higher level. */
function section(text: string, anchor: string): string {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => /^#{1,6} /.test(l) && anchors(l).has(anchor));
  if (start < 0) return "";
  const level = /^#+/.exec(lines[start])![0].length;
  const end = lines.findIndex((l, i) => i > start && /^#{1,6} /.test(l) && /^#+/.exec(l)![0].length <= level);
  return lines.slice(start, end < 0 ? undefined : end).join("\n");
}

/** A measured figure: a decimal or a range with a unit, or "about N <unit>". Limits and defaults are whole numbers. */
const MEASURED =
  /\b\d+\.\d+ ?(ms|s|min|minutes|GiB|MiB|GB|MB|%|x)(?![\w])|\b\d[\d,.]* to \d[\d,.]* ?(ms|s|min|minutes|GiB|MiB|GB|MB|%|x)(?![\w])|\babout \d[\d,.]* ?(ms|s|min|minutes|GiB|MiB|GB|MB|%)(?![\w])/g;

describe("documentation (every markdown file in git)", () => {
  it("every relative link reaches a file here, and its anchor a heading of it; nothing links outside the repository", () => {
    const problems: string[] = [];
    for (const file of markdown) {
      for (const [, , target] of prose(read(file)).matchAll(LINK)) {
        if (/^[a-z]+:/i.test(target)) {
          problems.push(`${file}: ${target}: a link outside the repository`);
          continue;
        }
        const [rel, anchor] = target.split("#");
        const abs = rel ? path.resolve(ROOT, path.dirname(file), rel) : path.join(ROOT, file);
        if (!abs.startsWith(ROOT + path.sep) && abs !== ROOT) {
          problems.push(`${file}: ${target}: outside the repository`);
          continue;
        }
        if (!fs.existsSync(abs)) {
          problems.push(`${file}: ${target}: no such file`);
          continue;
        }
        if (anchor && abs.endsWith(".md") && !anchors(fs.readFileSync(abs, "utf8")).has(anchor)) problems.push(`${file}: ${target}: no such heading`);
      }
    }
    expect(problems).to.deep.equal([]);
  });

  it("measured figures are stated in BENCHMARKS.md only; README and docs/ quote them as links whose text that section states", () => {
    const benchmarks = read("BENCHMARKS.md");
    const problems: string[] = [];
    for (const file of markdown.filter((f) => f !== "BENCHMARKS.md")) {
      const text = prose(read(file));
      for (const [, label, target] of text.matchAll(LINK)) {
        if (!/BENCHMARKS\.md#/.test(target) || !label.match(MEASURED)) continue;
        if (!section(benchmarks, target.split("#")[1]).includes(label))
          problems.push(`${file}: [${label}](${target}): not stated in that section of BENCHMARKS.md`);
      }
      const unlinked = text.replace(LINK, (_m, _label, target: string) => (/BENCHMARKS\.md#/.test(target) ? "" : _m)).match(MEASURED) ?? [];
      for (const figure of unlinked)
        problems.push(`${file}: "${figure}": a measured figure outside BENCHMARKS.md (quote it as a link to the section that states it)`);
    }
    expect(problems).to.deep.equal([]);
  });
});
