/**
 * `npm run screenshot -- PAGE.html OUT.png [--width N --height N]`: a PNG of a page written by
 * `status --html` or `preview --html`, taken by headless Chromium (the pictures in docs/ are made
 * this way). Without a size the window is the page's full size.
 */
import { screenshot } from "../automation/reports/chromium";
import { parseCommand, runMain, UsageError } from "./cli";

const SPEC = {
  usage: "npm run screenshot -- PAGE.html OUT.png [--width N --height N]",
  summary: "Takes a PNG of a status or preview page with headless Chromium.",
  positionals: ["PAGE", "OUT"],
  options: {
    width: { type: "string" as const, value: "N", help: "window width in pixels (default: the page's width)" },
    height: { type: "string" as const, value: "N", help: "window height in pixels (default: the page's height)" },
  },
};

async function main(): Promise<void> {
  const { values, positionals } = parseCommand(process.argv.slice(2), SPEC);
  if ((values.width === undefined) !== (values.height === undefined)) throw new UsageError("give both --width and --height, or neither");
  const size = values.width ? { width: Number(values.width), height: Number(values.height) } : undefined;
  if (size && !(size.width > 0 && size.height > 0)) throw new UsageError("--width and --height are positive numbers of pixels");
  const r = screenshot(positionals[0], positionals[1], size);
  console.log(`wrote ${positionals[1]} (${r.width}x${r.height})`);
}

runMain(SPEC, main);
