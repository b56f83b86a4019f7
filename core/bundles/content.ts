/**
 * A bundle's files, Fleet's content rules: every file under the bundle directory, recursively, except
 * hidden files and directories, paths matched by .fleetignore (patterns of a directory apply to it and
 * everything below; `dir/*` ignores the directory `dir`), and the fleet.yaml and values files that
 * configure the bundle. A symlink must resolve inside the bundle directory. Read through the checkout
 * (checkout.ts), so within its bounds; the bundle's files together are bounded too.
 */
import { FleetError } from "../errors";
import { Checkout, joinRel, mib } from "./checkout";
import { BadPattern, goMatch } from "./go-glob";
import { BundleFile } from "./types";

export function readBundleFiles(checkout: Checkout, bundleDir: string, exclude: string[], ctx: { gitRepo: string; bundle: string }): BundleFile[] {
  const files: BundleFile[] = [];
  let bytes = 0;
  const visit = (dir: string, relDir: string, ignores: IgnoreRule[]) => {
    const rules = [...ignores, ...readFleetIgnore(checkout, dir, ctx)];
    for (const entry of checkout.list(dir)) {
      if (entry.name.startsWith(".")) continue;
      const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
      const at = joinRel(dir, entry.name);
      if (entry.kind === "refused") throw new FleetError(entry.refused!, { ...ctx, file: rel });
      if (entry.symlink && !checkout.isInside(at, bundleDir)) {
        throw new FleetError(`symlink ${rel} points outside the bundle directory`, { ...ctx, file: rel });
      }
      const isDir = entry.kind === "dir";
      if (rules.some((r) => r(entry.name, isDir))) continue;
      if (isDir) {
        visit(at, rel, rules);
      } else if (!exclude.includes(rel)) {
        const data = checkout.read(at);
        bytes += data.length;
        if (bytes > checkout.limits.bundleBytes) {
          throw new FleetError(`the bundle's files add up to more than ${mib(checkout.limits.bundleBytes)} (limit PULUMI_FLEET_MAX_BUNDLE_MIB)`, { ...ctx, file: rel });
        }
        files.push(fileContent(rel, data));
      }
    }
  };
  visit(bundleDir, "", []);
  return files;
}

type IgnoreRule = (baseName: string, isDir: boolean) => boolean;

function readFleetIgnore(checkout: Checkout, dir: string, ctx: { gitRepo: string; bundle: string }): IgnoreRule[] {
  const file = joinRel(dir, ".fleetignore");
  let kind;
  try {
    kind = checkout.kindOf(file);
  } catch (err) {
    throw new FleetError((err as FleetError).reason ?? String(err), { ...ctx, file });
  }
  if (kind !== "file") return [];
  const rules: IgnoreRule[] = [];
  for (const raw of checkout.readText(file).split(/\r?\n/)) {
    const line = trimTrailingSpace(raw);
    if (line === "" || line.startsWith("#")) continue;
    if (line.endsWith("/*") && line.length > 2) {
      const dir = line.slice(0, -2);
      rules.push((name, isDir) => isDir && name === dir);
    } else {
      // Go's filepath.Match: a malformed pattern matches nothing (its error is ignored).
      rules.push((name) => {
        try {
          return goMatch(line, name);
        } catch (err) {
          if (err instanceof BadPattern) return false;
          throw err;
        }
      });
    }
  }
  return rules;
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
