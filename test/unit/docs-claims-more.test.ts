/**
 * More lists the docs state, compared with the code's own (beside docs-claims.test.ts): the GitRepo
 * table of docs/fleet-compatibility.md against the stack file's GitRepo fields, and the kinds
 * docs/behaviour.md says a pair waits for against the provider's own list.
 */
import { expect } from "chai";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { keysOf } from "../../core/config/field-table";
import { GIT_REPO_FIELDS } from "../../core/config/stack-fields";

const read = (rel: string) => fs.readFileSync(path.join(PROJECT_DIR, rel), "utf8");

/** The rows of the markdown table whose header line starts with `header`. */
function tableRows(text: string, header: string): string[] {
  const start = text.indexOf(header);
  expect(start, `a table headed ${header}`).to.be.greaterThan(-1);
  const end = text.indexOf("\n\n", start);
  return text
    .slice(start, end === -1 ? undefined : end)
    .split("\n")
    .slice(2);
}

describe("docs state what the code does (more lists compared with the code's own)", () => {
  it("docs/fleet-compatibility.md's GitRepo table names every field the stack file's gitRepos[] reader accepts", () => {
    const rows = tableRows(read("docs/fleet-compatibility.md"), "| GitRepo field (`gitRepos[]` in the stack file) |");
    // A field is named in a row's first cell (the treatment cell may mention others in passing).
    const named = new Set(rows.flatMap((r) => [...(r.split("|")[1] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1])));
    expect(keysOf(GIT_REPO_FIELDS).filter((f) => !named.has(f))).to.deep.equal([]);
  });

  it("docs/behaviour.md names every kind the provider waits for (tools/fleet-provider decide.go `awaited`)", () => {
    const go = read("tools/fleet-provider/decide.go");
    const block = /var awaited = map\[string\]bool\{([\s\S]*?)\n\}/.exec(go);
    expect(block, "decide.go's awaited map").to.not.equal(null);
    const kinds = new Set([...block![1].matchAll(/"[^"/]*\/(\w+)": true/g)].map((m) => m[1]));
    expect(kinds.size).to.be.greaterThan(5);
    const sentence = /for the readiness \(kstatus\) of the kinds[\s\S]*?\), so rollout waves/.exec(read("docs/behaviour.md"));
    expect(sentence, "behaviour.md's sentence listing the awaited kinds").to.not.equal(null);
    const text = sentence![0].replace(/\s+/g, " ");
    const plural = (k: string) => (k.endsWith("s") ? `${k}es` : `${k}s`);
    expect([...kinds].filter((k) => !text.includes(plural(k)))).to.deep.equal([]);
  });
});
