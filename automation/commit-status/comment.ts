/**
 * The pull-request comment of one environment: the commit's result per cluster, and each failed or held
 * bundle deployment with why. One comment per pull request and stack, found again by a hidden marker and
 * updated in place. Every name and word from the fleet goes through escape/markdown.ts, and the text is
 * bounded (GitHub refuses comments over 65536 characters): a long list is cut and says so. Pure.
 */
import { markdownCell, markdownCode, markdownText } from "../reports/escape/markdown";
import { CommitResult } from "./decide";

/** The most cluster rows and failure lines one comment shows (the rest: `status`). */
export const MAX_COMMENT_ROWS = 200;
export const MAX_COMMENT_LINES = 30;
/** Below GitHub's 65536-character limit on a comment, whatever the rows hold. */
export const MAX_COMMENT_CHARS = 60_000;

/** The hidden line that makes a comment this stack's: a stack name is letters, digits, "-", "_" and "." (Pulumi's rule). */
export function commentMarker(stack: string): string {
  return `<!-- pulumi-fleet commit-status stack=${stack.replace(/[^A-Za-z0-9_.-]/g, "_")} -->`;
}

const WORDS: Record<CommitResult["state"], string> = { success: "deployed", failure: "failed", pending: "pending" };

export function commentMarkdown(stack: string, context: string, r: CommitResult): string {
  const out = [
    commentMarker(stack),
    `### pulumi-fleet: stack ${markdownCode(stack)} — ${WORDS[r.state]}`,
    "",
    `Commit ${markdownCode(r.commit.slice(0, 12))} of GitRepo(s) ${r.gitRepos.map((g) => markdownCode(g)).join(", ")} (status ${markdownCode(context)}): ${markdownText(r.description)}`,
    "",
  ];
  if (r.clusters.length) {
    out.push("| Cluster | Bundles | Ready | Failed | Held |", "| --- | ---: | ---: | ---: | ---: |");
    for (const c of r.clusters.slice(0, MAX_COMMENT_ROWS))
      out.push(`| ${markdownCell(c.cluster, 100)}${c.offline ? " (Offline)" : ""} | ${c.bundles} | ${c.ready} | ${c.failed} | ${c.held} |`);
    if (r.clusters.length > MAX_COMMENT_ROWS) out.push("", `… and ${r.clusters.length - MAX_COMMENT_ROWS} more cluster(s): see \`npm run status\`.`);
    out.push("");
  }
  out.push(...lines("Failed", r.failures), ...lines("Held", r.held));
  const text = out.join("\n");
  return text.length <= MAX_COMMENT_CHARS ? text : `${text.slice(0, MAX_COMMENT_CHARS).replace(/\n[^\n]*$/, "")}\n\n… (cut: see \`npm run status\`)\n`;
}

function lines(title: string, list: CommitResult["failures"]): string[] {
  if (!list.length) return [];
  const shown = list
    .slice(0, MAX_COMMENT_LINES)
    .map(
      (x) =>
        `- ${x.cluster ? `cluster ${markdownCode(x.cluster, 100)} ` : ""}GitRepo ${markdownCode(x.gitRepo, 100)} bundle ${markdownCode(x.bundle, 100)}: ${markdownText(x.reason, 300)}`,
    );
  const more = list.length > MAX_COMMENT_LINES ? [`- … and ${list.length - MAX_COMMENT_LINES} more: see \`npm run status\`.`] : [];
  return [`**${title}:**`, "", ...shown, ...more, ""];
}
