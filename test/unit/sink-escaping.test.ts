/**
 * One escaping function per sink (automation/reports/escape/), each fed every hostile shape
 * (test/support/hostile-text.ts): what comes out is text for that sink, never its markup or commands.
 */
import { expect } from "chai";
import { HOSTILE } from "../support/hostile-text";
import { markdownCell, markdownCode, markdownText } from "../../automation/reports/escape/markdown";
import { ciLogText, guardCiLog, writeRaw } from "../../automation/reports/escape/ci-log";
import { slackCode, slackText } from "../../automation/reports/escape/chat-slack";
import { teamsRichText, teamsRun } from "../../automation/reports/escape/chat-teams";
import { escapeHtml } from "../../automation/reports/escape/html";
import { MAX_SINK_TEXT, plainLines } from "../../automation/reports/escape/text";

const BREAKS = /[\r\n\v\f\u0085\u2028\u2029]/;
// eslint-disable-next-line no-control-regex -- what must not come out
const CONTROL = /[\x00-\x08\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
// A mention or a URL a renderer would act on: `@` before a word character, a scheme before `://`, `www.`.
const ACTIONABLE = /@\w|[a-z]:\/\/|\bwww\.|#\d/i;
const COMMAND_LINE = /^\s*(::|##\[|##vso\[)/i;

/** Markdown's own characters in `s` that are not escaped by a backslash. */
function unescapedMarkdown(s: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if ("[]`*_|<>!~$".includes(s[i])) out.push(s[i]);
  }
  return out;
}

for (const [shape, text] of Object.entries(HOSTILE)) {
  describe(`sink escaping: ${shape}`, () => {
    it("markdownText: one line of text, no markup, HTML, mention or link, bounded", () => {
      const md = markdownText(text);
      expect(md).to.not.match(BREAKS).and.not.match(CONTROL).and.not.match(ACTIONABLE);
      expect(unescapedMarkdown(md), md).to.deep.equal([]);
      expect(md).to.not.include("<").and.not.include(">");
      expect(Array.from(md).length).to.be.at.most(MAX_SINK_TEXT * 3);
    });

    it("markdownCode and markdownCell: one code span, its fence longer than any backtick run inside", () => {
      const code = markdownCode(text);
      expect(code).to.not.match(BREAKS).and.not.match(CONTROL);
      const fence = /^`+/.exec(code)![0];
      expect(code.endsWith(fence)).to.equal(true);
      const inner = code.slice(fence.length, code.length - fence.length);
      expect(Math.max(0, ...(inner.match(/`+/g) ?? []).map((r) => r.length))).to.be.below(fence.length);
      expect(code.length).to.be.at.most(300 + 2 * fence.length);
      expect(markdownCell(text).replace(/\\\|/g, "")).to.not.include("|");
    });

    it("ciLogText: no line a workflow command, no escape sequence or control character", () => {
      const log = ciLogText(text);
      expect(log)
        // eslint-disable-next-line no-control-regex -- what must not come out
        .to.not.match(/[\r\v\f\u0085\u2028\u2029\x1b\x9b]/)
        .and.not.match(CONTROL);
      for (const line of log.split("\n")) expect(line, line).to.not.match(COMMAND_LINE);
    });

    it("slackText and slackCode: no mention, link, formatting or code fence of content's", () => {
      const t = slackText(text);
      expect(t).to.not.match(BREAKS).and.not.match(CONTROL).and.not.match(ACTIONABLE);
      expect(t).to.not.match(/[<>*_~`]/);
      expect(Array.from(t).length).to.be.at.most(300 * 5);
      const c = slackCode(text);
      expect(c).to.not.include("```").and.not.match(/[<>`]/).and.not.match(ACTIONABLE).and.not.match(CONTROL);
      expect(c).to.not.match(/[\r\v\f\u0085\u2028\u2029]/);
    });

    it("teamsRun: a TextRun (never Markdown) of plain text, no mention or link", () => {
      const run = teamsRun(text);
      expect(run.type).to.equal("TextRun");
      expect(run.text).to.not.match(BREAKS).and.not.match(CONTROL).and.not.match(ACTIONABLE);
      expect(teamsRun(text, {}, true).text).to.not.match(/[\r\v\f\u0085\u2028\u2029]/);
      expect(teamsRichText([run]).type).to.equal("RichTextBlock");
    });

    it("escapeHtml: no markup, in element content and in attribute values", () => {
      const html = escapeHtml(text);
      expect(html)
        .to.not.match(/[<>"'`]/)
        .and.not.match(CONTROL);
      expect(html.replace(/&(amp|lt|gt|quot|#39|#96);/g, "")).to.not.include("&");
    });
  });
}

describe("sink escaping: what stays readable", () => {
  it("keeps the words: a name, a sentence, a line", () => {
    expect(markdownCode("team-b/cfg")).to.equal("`team-b/cfg`");
    expect(markdownText("fleet.yaml: helm.atomic: true is not honoured")).to.equal("fleet.yaml: helm.atomic: true is not honoured");
    expect(markdownText("# heading")).to.equal("\\# heading");
    expect(markdownText("1. item")).to.equal("1\\. item");
    expect(ciLogText("warning: bundle web\nsecond line")).to.equal("warning: bundle web\nsecond line");
    expect(ciLogText("::error::x")).to.equal("\\::error::x");
    expect(slackText("apps/web failed on c2")).to.equal("apps/web failed on c2");
    expect(escapeHtml(`<a href="x">'&'</a>`)).to.equal("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    expect(plainLines("a\r\nb\rc")).to.equal("a\nb\nc");
  });

  it("a code span holding backticks, or starting with one, gets a longer fence and padding", () => {
    expect(markdownCode("a`b")).to.equal("``a`b``");
    expect(markdownCode("`x")).to.equal("`` `x ``");
  });
});

describe("sink escaping: the CI log's guard on a stream", () => {
  function guarded(): { write: (s: string) => void; out: () => string; exit: () => void } {
    const chunks: string[] = [];
    let flush = () => {};
    const stream = { write: (s: string) => (chunks.push(String(s)), true) };
    guardCiLog(stream, (f) => (flush = f));
    return { write: (s) => stream.write(s), out: () => chunks.join(""), exit: () => flush() };
  }

  it("a command split over writes, after a CR, or indented, is not a command", () => {
    const g = guarded();
    for (const chunk of [":", ":error::split\n", "ok\r", "::error::after cr\n", "  ", "::warning::indented\n", "#", "#[group]x\n", "mid ", "::not at start\n"])
      g.write(chunk);
    g.write("::add-mask::at the end");
    g.exit();
    const lines = g.out().split("\n");
    for (const line of lines) expect(line, g.out()).to.not.match(COMMAND_LINE);
    expect(g.out()).to.include("\\::error::split").and.include("mid ::not at start").and.include("\\::add-mask::at the end");
  });

  it("JSON printed through it (status --json, shards --matrix) stays valid JSON with the same keys", () => {
    const chunks: string[] = [];
    const stream = { write: (s: string) => (chunks.push(s), true) };
    guardCiLog(stream, () => {});
    const value = { ...HOSTILE, tricky: 'a\u009b","b', quote: 'x\u001b]8;;"},"y' };
    stream.write(JSON.stringify(value, null, 2) + "\n");
    stream.write(JSON.stringify(value) + "\n");
    const [pretty, compact] = chunks
      .join("")
      .trimEnd()
      .split(/\n(?=\{)/);
    expect(Object.keys(JSON.parse(pretty))).to.deep.equal(Object.keys(value));
    expect(Object.keys(JSON.parse(compact))).to.deep.equal(Object.keys(value));
    expect(JSON.parse(compact).long).to.equal(HOSTILE.long);
  });

  it("an unterminated OSC sequence does not swallow the lines after it", () => {
    expect(ciLogText("\x1b]8;;https://evil.example\nnext team's line")).to.equal("\nnext team's line");
  });

  it("writeRaw passes the program's own escape sequences; content's are removed", () => {
    const chunks: string[] = [];
    const stream = { write: (s: string) => (chunks.push(s), true) };
    guardCiLog(stream, () => {});
    stream.write("\x1b[31mred\x1b[0m\n");
    writeRaw(stream, "\x1b[2F\x1b[J");
    expect(chunks).to.deep.equal(["red\n", "\x1b[2F\x1b[J"]);
  });
});
