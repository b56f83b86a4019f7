/**
 * core/bundles/go-glob.ts against Go's own filepath.Match (test/support/go-match, run with `go run`):
 * the same answer and the same malformed patterns for every case; and patterns that made a regex-based
 * matcher backtrack for ever end at once.
 */
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { BadPattern, goMatch } from "../../core/bundles/go-glob";

const PATTERNS = [
  "*",
  "*.yaml",
  "a*",
  "*a",
  "a*b",
  "a*b*c",
  "?",
  "??",
  "a?c",
  "[abc]",
  "[a-c]x",
  "[^a-c]",
  "[^a]*",
  "[]a]",
  "[a-]",
  "[-a]",
  "[",
  "[a",
  "[a-",
  "a[",
  "\\*",
  "\\",
  "a\\",
  "\\a",
  "[\\]]",
  "[\\-]",
  "*/*",
  "a/*",
  "a/b",
  "**",
  "*.y?ml",
  "[!a]",
  "é*",
  "[é-ü]",
  "*[0-9]",
  "x*y*z",
  "*x*",
  "[a-c-e]",
  "a*/b",
  ".*",
  "*.",
];
const NAMES = [
  "",
  "a",
  "b",
  "abc",
  "a.yaml",
  "x.yml",
  "ab/c",
  "a/b",
  "aXb",
  "axbyc",
  "]",
  "-",
  "*",
  "\\",
  "!",
  "é",
  "ü",
  "dir",
  ".hidden",
  "a1",
  "xyz",
  "x/y/z",
  "axxxbxxxc",
];

describe("Go's filepath.Match, as Fleet matches GitRepo paths and .fleetignore lines", function () {
  this.timeout(120_000);

  it("gives Go's answer, and Go's bad-pattern errors, for every pattern and name", () => {
    const cases: [string, string][] = PATTERNS.flatMap((p) => NAMES.map((n): [string, string] => [p, n]));
    const want: [boolean, boolean][] = JSON.parse(
      execFileSync("go", ["run", path.join(__dirname, "../support/go-match/main.go")], {
        input: JSON.stringify(cases),
        encoding: "utf8",
        env: { ...process.env, GOFLAGS: "-mod=mod", GO111MODULE: "off" },
      }),
    );
    const got = cases.map(([p, n]): [boolean, boolean] => {
      try {
        return [goMatch(p, n), false];
      } catch (err) {
        if (err instanceof BadPattern) return [false, true];
        throw err;
      }
    });
    const differ = cases.filter((_, i) => got[i][0] !== want[i][0] || got[i][1] !== want[i][1]).map((c, i) => ({ case: c, got: got[i], want: want[i] }));
    expect(differ, JSON.stringify(differ.slice(0, 10))).to.deep.equal([]);
  });

  it("a pattern of many stars against a long name ends at once (a regex backtracked for ever)", () => {
    const t = Date.now();
    expect(goMatch("*a".repeat(40) + "b", "a".repeat(250))).to.equal(false);
    expect(goMatch("*a".repeat(40), "a".repeat(250))).to.equal(true);
    expect(Date.now() - t).to.be.lessThan(1000);
  });
});
