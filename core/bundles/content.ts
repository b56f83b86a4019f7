/**
 * A bundle's files, Fleet's content rules: every file under the bundle directory, recursively, except
 * hidden files and directories, paths matched by .fleetignore (patterns of a directory apply to it and
 * everything below; `dir/*` ignores the directory `dir`), and the fleet.yaml and values files that
 * configure the bundle. A symlink must resolve inside the bundle directory. Read through the checkout
 * (checkout.ts), so within its bounds; the bundle's files together are bounded too, and so is the
 * matching of .fleetignore patterns (PULUMI_FLEET_MAX_IGNORE_STEPS per checkout: each test is at most
 * name x pattern, but a .fleetignore of many patterns is tested against every name below it).
 * Their content address is Fleet's manifestID (manifestIdOf).
 */
import { FleetError } from "../base/errors";
import { sha256Hex, stableJson } from "../base/hash";
import { Checkout, joinRel, mib } from "./checkout";
import { BadPattern, compileGoPattern, GoPattern } from "./go-glob";
import { BundleFile } from "./types";

/** Fleet's manifestID: "s-" + sha256 of the resources, independent of file system order. */
export function manifestIdOf(files: BundleFile[]): string {
  const sorted = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return `s-${sha256Hex(stableJson({ resources: sorted }))}`.slice(0, 63);
}

export function readBundleFiles(checkout: Checkout, bundleDir: string, exclude: string[], ctx: { gitRepo: string; bundle: string }): BundleFile[] {
  const files: BundleFile[] = [];
  let bytes = 0;
  const visit = (dir: string, relDir: string, ignores: IgnoreLayer | undefined) => {
    const rules = readFleetIgnore(checkout, dir, ctx, ignores);
    for (const entry of checkout.list(dir)) {
      if (entry.name.startsWith(".")) continue;
      const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
      const at = joinRel(dir, entry.name);
      if (entry.kind === "refused") throw new FleetError(entry.refused!, { ...ctx, file: rel });
      if (entry.symlink && !checkout.isInside(at, bundleDir)) {
        throw new FleetError(`symlink ${rel} points outside the bundle directory`, { ...ctx, file: rel });
      }
      const isDir = entry.kind === "dir";
      if (isIgnored(checkout, rules, entry.name, isDir, { ...ctx, file: rel })) continue;
      if (isDir) {
        visit(at, rel, rules);
      } else if (!exclude.includes(rel)) {
        const data = checkout.read(at);
        bytes += data.length;
        if (bytes > checkout.limits.bundleBytes) {
          throw new FleetError(`the bundle's files add up to more than ${mib(checkout.limits.bundleBytes)} (limit PULUMI_FLEET_MAX_BUNDLE_MIB)`, {
            ...ctx,
            file: rel,
          });
        }
        files.push(fileContent(rel, data));
      }
    }
  };
  visit(bundleDir, "", undefined);
  return files;
}

/**
 * The .fleetignore of one directory, parsed once, above its parent directory's: names as a set, each
 * wildcard pattern compiled once (matching a 16 MiB line was parsing it again for every file).
 */
/** Linux's longest file name, in bytes (so at most as many characters): a longer pattern matches nothing. */
const NAME_MAX = 255;

interface IgnoreLayer {
  parent: IgnoreLayer | undefined;
  /** Lines without a wildcard: the names they ignore. */
  names: Set<string>;
  /** `dir/*` lines: the directories they ignore. */
  dirs: Set<string>;
  patterns: GoPattern[];
}

function readFleetIgnore(checkout: Checkout, dir: string, ctx: { gitRepo: string; bundle: string }, parent: IgnoreLayer | undefined): IgnoreLayer | undefined {
  const file = joinRel(dir, ".fleetignore");
  let kind;
  try {
    kind = checkout.kindOf(file);
  } catch (err) {
    throw new FleetError((err as FleetError).reason ?? String(err), { ...ctx, file });
  }
  if (kind !== "file") return parent;
  const layer: IgnoreLayer = { parent, names: new Set(), dirs: new Set(), patterns: [] };
  const seen = new Set<string>();
  for (const raw of checkout.readText(file).split(/\r?\n/)) {
    const line = trimTrailingSpace(raw);
    if (line === "" || line.startsWith("#") || seen.has(line)) continue;
    seen.add(line);
    if (line.endsWith("/*") && line.length > 2) {
      layer.dirs.add(line.slice(0, -2));
      continue;
    }
    let pattern: GoPattern;
    try {
      pattern = compileGoPattern(line, NAME_MAX);
    } catch (err) {
      if (err instanceof BadPattern) continue; // Go's filepath.Match: a malformed pattern matches nothing (its error is ignored)
      throw err;
    }
    if (pattern.literal !== undefined) layer.names.add(pattern.literal);
    else layer.patterns.push(pattern);
  }
  return layer;
}

/** Whether a layer (or one above it) ignores the entry; the wildcard matching is bounded per checkout. */
function isIgnored(
  checkout: Checkout,
  layer: IgnoreLayer | undefined,
  name: string,
  isDir: boolean,
  ctx: { gitRepo: string; bundle: string; file: string },
): boolean {
  let chars: string[] | undefined;
  const meter = checkout.ignoreMatching;
  for (; layer; layer = layer.parent) {
    if (layer.names.has(name) || (isDir && layer.dirs.has(name))) return true;
    for (const p of layer.patterns) {
      chars ??= [...name];
      const matched = p.matchesChars(chars, meter);
      if (meter.steps > checkout.limits.ignoreSteps) {
        throw new FleetError(
          `matching .fleetignore patterns against the repository's names took more than ${checkout.limits.ignoreSteps} steps ` +
            "(limit PULUMI_FLEET_MAX_IGNORE_STEPS; a step is a character compared)",
          ctx,
        );
      }
      if (matched) return true;
    }
  }
  return false;
}

/**
 * Trailing whitespace dropped unless a backslash escapes it (and a line of whitespace keeps its first
 * character), in one pass: a regular expression for it backtracked quadratically on a long line.
 */
function trimTrailingSpace(line: string): string {
  let end = line.length;
  while (end > 0 && /\s/.test(line[end - 1])) end--;
  if (end === line.length) return line;
  if (end === 0) return line.length > 1 ? line.slice(0, 1) : line;
  return line[end - 1] === "\\" ? line : line.slice(0, end);
}

/** Text as is; anything that is not valid UTF-8 (a chart archive in charts/) as base64. */
function fileContent(name: string, data: Buffer): BundleFile {
  const text = data.toString("utf8");
  return Buffer.from(text, "utf8").equals(data) ? { name, content: text } : { name, content: data.toString("base64"), encoding: "base64" };
}

const OVERLAY_PREFIX = "overlays/";

/** The files Fleet would render as manifests or chart templates (before overlays are applied): none means an empty bundle, told early. */
export function rawManifestFiles(files: BundleFile[]): BundleFile[] {
  const ignorePrefixes = files
    .filter((f) => (/(^|\/)fleet\.ya?ml$/.test(f.name) && f.name.includes("/")) || f.name.endsWith("/Chart.yaml"))
    .map((f) => f.name.slice(0, f.name.lastIndexOf("/") + 1));
  return files.filter(
    (f) =>
      !/^fleet\.ya?ml$/.test(f.name) &&
      /\.(ya?ml|json)$/.test(f.name) &&
      !f.name.startsWith(OVERLAY_PREFIX) &&
      !ignorePrefixes.some((p) => f.name.startsWith(p)),
  );
}
