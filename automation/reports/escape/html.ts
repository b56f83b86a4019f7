/**
 * The status page's sink (HTML, automation/reports/status-page.ts): every string from the fleet is
 * text, never markup, in element content and in quoted attribute values alike.
 */
import { capped, plainLines } from "./text";

/** A cell's details (its objects, its messages) are longer than one message: the page caps them higher. */
const MAX_HTML_TEXT = 8000;

const ENTITY: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" };

/** Content as HTML text or a quoted attribute value. */
export function escapeHtml(s: string, max = MAX_HTML_TEXT): string {
  return capped(plainLines(String(s)), max).replace(/[&<>"'`]/g, (c) => ENTITY[c]);
}
