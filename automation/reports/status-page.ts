/**
 * The fleet as one self-contained HTML page (`status --html`, `preview --html`): the matrix of
 * fleet-matrix.ts, coloured by state, with the details of a cell on hover (title) and on click.
 * Pure: data in, HTML text out. Nothing is fetched when the page is viewed (inline style and script,
 * system fonts), so it can be attached to a CI run or mailed. Every string from the fleet is escaped.
 *
 * Size matters at fleet scale (200 clusters x 50 bundles is 10,000 cells): cells carry one short
 * class and their details in `title`, which the browser shows on hover with no script at all.
 */
import { CellKind, GroupBy, KIND_LABEL, KIND_MARK, Matrix, PreviewInput, previewMatrix, statusMatrix } from "./fleet-matrix";
import { StatusReport } from "./status";
import { escapeHtml } from "./escape/html";

export { escapeHtml };

/** Fill and text colours; the light "not targeted" keeps a border so the grid stays visible. */
export const KIND_COLOUR: Record<CellKind, [string, string]> = {
  ErrApplied: ["#d32f2f", "#fff"],
  WaitApplied: ["#1e63b8", "#fff"],
  Modified: ["#f2c200", "#000"],
  OutOfSync: ["#8e44ad", "#fff"],
  Pending: ["#8fbce6", "#000"],
  NotReady: ["#ef6c00", "#fff"],
  Ready: ["#2e9a48", "#fff"],
  NotTargeted: ["#f1f1f1", "#777"],
  prune: ["#d32f2f", "#fff"],
  replace: ["#ef6c00", "#fff"],
  update: ["#f2c200", "#000"],
  create: ["#1e63b8", "#fff"],
  unreachable: ["#555555", "#fff"],
  unchanged: ["#cfe3d3", "#333"],
};

const STYLE = `
body{font:13px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:19px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 6px}code{font-family:ui-monospace,"DejaVu Sans Mono",monospace}
.notes{margin:0;padding:0;list-style:none;color:#555}.legend{display:flex;flex-wrap:wrap;gap:6px 16px;padding:0;list-style:none;margin:10px 0}
.legend li{display:flex;align-items:center;gap:5px}.sw{display:inline-block;width:14px;height:14px;border:1px solid #bbb}
table{border-collapse:collapse}.repos td,.repos th{padding:3px 10px 3px 0;text-align:left;white-space:nowrap}
.matrix th,.matrix td{border:1px solid #fff;padding:0 4px;white-space:nowrap;font-weight:normal}
.matrix td.c{width:16px;min-width:16px;max-width:16px;height:16px;padding:0;text-align:center;font:bold 11px/16px monospace;cursor:pointer;border-color:#e4e4e4}
.matrix th.repo{max-width:0;overflow:hidden;text-overflow:ellipsis;font-weight:bold;text-align:left}
.badge{display:inline-block;padding:0 6px;border-radius:3px}
.matrix th.b{vertical-align:bottom;padding:4px 0;position:sticky;top:0;background:#fff;z-index:1}
.matrix th.b span{writing-mode:vertical-rl;transform:rotate(180deg)}
.matrix th.cl{text-align:left;font-weight:bold;position:sticky;left:0;background:#fff}
.matrix th.h{text-align:left;vertical-align:bottom;color:#555}
.matrix td.img{max-width:220px;overflow:hidden;text-overflow:ellipsis}
.matrix tr.grp th{text-align:left;background:#eef1f5;font-weight:bold;padding:3px 6px}
.matrix tr:hover th.cl{background:#ffe9a8}
#detail{position:fixed;left:16px;right:16px;bottom:12px;margin:0;padding:8px 12px;background:#222;color:#fff;font:12px/1.4 ui-monospace,"DejaVu Sans Mono",monospace;white-space:pre-wrap;border-radius:4px}
`;

// Doubled selectors outrank the table's own cell rules.
const kindCss = () =>
  Object.entries(KIND_COLOUR)
    .map(([k, [bg, fg]]) => `.k-${k}.k-${k}{background:${bg};color:${fg}}`)
    .join("\n");

// Click a cell: its details stay in a panel at the bottom (hover shows them too, without script).
const SCRIPT = `document.getElementById("matrix").addEventListener("click",function(e){var t=e.target.closest("td.c");if(!t)return;var d=document.getElementById("detail");d.textContent=t.title;d.hidden=false});
document.getElementById("detail").addEventListener("click",function(){this.hidden=true});`;

export interface PageOptions {
  groupBy?: GroupBy;
}

export function renderStatusPage(report: StatusReport, options: PageOptions = {}): string {
  return renderMatrixPage(statusMatrix(report, options.groupBy));
}

export function renderPreviewPage(report: PreviewInput, options: PageOptions = {}): string {
  return renderMatrixPage(previewMatrix(report, options.groupBy));
}

export function renderMatrixPage(m: Matrix): string {
  const e = escapeHtml;
  const nInfo = m.rowInfo.length;
  const total = Object.values(m.counts).reduce((a, b) => a + (b ?? 0), 0);
  const out: string[] = [];
  out.push(
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">`,
    `<title>${e(m.title)}</title><style>${STYLE}${kindCss()}</style></head><body>`,
    `<h1>${e(m.title)}</h1><ul class="notes">${m.notes.map((n) => `<li>${e(n)}</li>`).join("")}</ul>`,
  );
  out.push(
    `<ul class="legend" id="legend">${m.kinds
      .map((k) => `<li><span class="sw k-${e(k)}"></span>${e(KIND_LABEL[k] ?? k)} <b data-kind="${e(k)}">${m.counts[k] ?? 0}</b></li>`)
      .join("")}` + `<li>of <b id="total">${total}</b> cells</li></ul>`,
  );
  const ready = m.columnGroups.some((g) => g.ready !== undefined);
  out.push(`<table class="repos" id="repos"><tr><th>GitRepo</th>${ready ? "<th>state</th>" : ""}<th>commit</th>${ready ? "<th>clusters ready</th>" : ""}</tr>`);
  for (const g of m.columnGroups) {
    out.push(
      `<tr data-gitrepo="${e(g.gitRepo)}"><td><b>${e(g.gitRepo)}</b></td>` +
        (ready ? `<td>${g.kind ? `<span class="badge k-${e(g.kind)}">${e(KIND_LABEL[g.kind] ?? g.kind)}</span>` : ""}</td>` : "") +
        `<td><code>${e(g.commit)}</code></td>${ready ? `<td class="ready">${e(g.ready ?? "")}</td>` : ""}</tr>`,
    );
  }
  out.push(`</table>`);

  // Header: GitRepo bands over their bundles, then one vertical name per bundle.
  out.push(`<h2>Clusters by bundles</h2><table class="matrix" id="matrix"><thead><tr><th colspan="${1 + m.leadInfo}"></th>`);
  for (const g of m.columnGroups) {
    const title = [g.gitRepo, `commit ${g.commit}`, ...(g.ready ? [`${g.ready} clusters ready`] : [])].join("\n");
    out.push(`<th class="repo k-${e(g.kind ?? "unchanged")}" colspan="${g.bundles.length}" title="${e(title)}">${e(g.gitRepo)}</th>`);
  }
  out.push(`<th colspan="${nInfo - m.leadInfo}"></th></tr><tr><th class="h">cluster</th>`);
  out.push(
    m.rowInfo
      .slice(0, m.leadInfo)
      .map((h) => `<th class="h">${e(h)}</th>`)
      .join(""),
  );
  out.push(m.columns.map((c) => `<th class="b" title="${e(`${c.gitRepo}/${c.bundle}`)}"><span>${e(c.bundle)}</span></th>`).join(""));
  out.push(
    m.rowInfo
      .slice(m.leadInfo)
      .map((h) => `<th class="h">${e(h)}</th>`)
      .join(""),
    `</tr></thead>`,
  );

  const width = 1 + nInfo + m.columns.length;
  for (const g of m.rowGroups) {
    out.push(`<tbody><tr class="grp"><th colspan="${width}">${e(g.name)} · ${g.rows.length} cluster(s)</th></tr>`);
    for (const r of g.rows) {
      const info = (i: number) =>
        `<td class="i${m.rowInfo[i] === "agent image" ? " img" : ""}${i === 0 && r.kind ? ` k-${e(r.kind)}` : ""}"` +
        `${r.infoTitles?.[i] ? ` title="${e(r.infoTitles[i])}"` : ""}>${e(r.info[i] ?? "")}</td>`;
      const lead = Array.from({ length: m.leadInfo }, (_, i) => info(i)).join("");
      const tail = Array.from({ length: nInfo - m.leadInfo }, (_, i) => info(m.leadInfo + i)).join("");
      const cells = r.cells.map((c) => `<td class="c k-${e(c.kind)}" title="${e(c.detail.join("\n"))}">${e(KIND_MARK[c.kind] ?? "?")}</td>`).join("");
      out.push(`<tr data-cluster="${e(r.cluster)}"><th class="cl" scope="row">${e(r.cluster)}</th>${lead}${cells}${tail}</tr>`);
    }
    out.push(`</tbody>`);
  }
  out.push(`</table><pre id="detail" hidden></pre><script>${SCRIPT}</script></body></html>\n`);
  return out.join("\n");
}
