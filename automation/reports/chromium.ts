/**
 * Headless Chromium (Debian's chromium package; scripts/ensure-chromium.sh installs it) for looking at
 * the status page as a person would: the DOM after the page ran, a screenshot, and the page's own
 * timing. Used by the browser test, the page benchmark and the screenshots in docs/.
 *
 * Each run gets a fresh profile directory, removed afterwards. The flags keep Chromium from opening
 * any connection of its own (background networking, component updates, sync, QUIC): the machines
 * refuse them, and a page that must not need the network is best checked with none.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--hide-scrollbars",
  "--force-device-scale-factor=1",
];

/** The browser binary: PULUMI_FLEET_CHROMIUM, else `chromium` on PATH. */
export function chromiumBinary(): string {
  return process.env.PULUMI_FLEET_CHROMIUM || "chromium";
}

/** Runs Chromium on one local file; throws with its output when it fails or is missing (never a skip). */
export function runChromium(file: string, args: string[], timeoutMs = 120_000): { stdout: string; ms: number } {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "pf-chromium-"));
  try {
    const started = performance.now();
    const r = spawnSync(chromiumBinary(), [...FLAGS, `--user-data-dir=${profile}`, ...args, pathToFileURL(path.resolve(file)).href], {
      encoding: "utf8",
      timeout: timeoutMs,
      maxBuffer: 256 * 1024 * 1024,
    });
    const ms = performance.now() - started;
    if ((r.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") {
      throw new Error(
        `${chromiumBinary()} not found: the status page is tested in headless Chromium; run \`bash scripts/ensure-chromium.sh\` (npm test does) or install Debian's chromium package`,
      );
    }
    if (r.error || r.status !== 0) {
      throw new Error(`chromium ${args.join(" ")} ${file} failed (${r.error?.message ?? `exit ${r.status}`}):\n${(r.stderr ?? "").slice(-3000)}`);
    }
    return { stdout: r.stdout, ms };
  } finally {
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

/** The serialized DOM after the page loaded and its scripts ran. */
export function dumpDom(file: string): string {
  return runChromium(file, ["--dump-dom"]).stdout;
}

/**
 * The page's full size and how long the browser took to parse and lay it out (navigation start to a
 * forced layout at the end of the body), measured on a copy with a probe script appended.
 */
export function measurePage(file: string): { width: number; height: number; layoutMs: number; processMs: number } {
  const probe = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pf-page-")), path.basename(file));
  const script =
    `<script>(function(){var h=document.documentElement;var w=h.scrollWidth,ht=h.scrollHeight;` +
    `document.body.setAttribute("data-pf-probe",w+" "+ht+" "+performance.now().toFixed(1))})()</script>`;
  fs.writeFileSync(probe, fs.readFileSync(file, "utf8").replace(/<\/body>/, `${script}</body>`));
  try {
    const r = runChromium(probe, ["--dump-dom"]);
    const m = /data-pf-probe="(\d+) (\d+) ([\d.]+)"/.exec(r.stdout);
    if (!m) throw new Error(`no layout probe in the DOM of ${file}`);
    return { width: +m[1], height: +m[2], layoutMs: +m[3], processMs: r.ms };
  } finally {
    fs.rmSync(path.dirname(probe), { recursive: true, force: true });
  }
}

/** A PNG of the page; the window is the page's full size unless given (capped, a screenshot is one viewport). */
export function screenshot(file: string, png: string, size?: { width: number; height: number }): { width: number; height: number; ms: number } {
  const s = size ?? measurePage(file);
  const width = Math.min(Math.max(s.width, 320), 4000);
  const height = Math.min(Math.max(s.height, 200), 12000);
  fs.mkdirSync(path.dirname(path.resolve(png)), { recursive: true });
  const r = runChromium(file, [`--screenshot=${path.resolve(png)}`, `--window-size=${width},${height}`]);
  if (!fs.existsSync(png)) throw new Error(`chromium wrote no screenshot ${png}`);
  return { width, height, ms: r.ms };
}
