/**
 * A bundle's files, Fleet's content rules: every file under the bundle directory, recursively, except
 * hidden files and directories, paths matched by .fleetignore (patterns of a directory apply to it and
 * everything below; `dir/*` ignores the directory `dir`), and the fleet.yaml and values files that
 * configure the bundle. A symlink must resolve inside the bundle directory.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import picomatch from "picomatch";
import { FleetError } from "../errors";
import { BundleFile } from "./types";

export function readBundleFiles(bundleDir: string, exclude: string[], ctx: { gitRepo: string; bundle: string }): BundleFile[] {
  const files: BundleFile[] = [];
  const realRoot = fs.realpathSync(bundleDir);
  const visit = (absDir: string, relDir: string, ignores: IgnoreRule[]) => {
    const rules = [...ignores, ...readFleetIgnore(absDir)];
    for (const entry of fs.readdirSync(absDir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
      const abs = path.join(absDir, entry.name);
      if (entry.name.startsWith(".")) continue;
      let isDir = entry.isDirectory();
      if (entry.isSymbolicLink()) {
        let real: string;
        try {
          real = fs.realpathSync(abs);
        } catch {
          throw new FleetError(`symlink ${rel} is broken`, { ...ctx, file: rel });
        }
        if (real !== realRoot && !real.startsWith(realRoot + path.sep)) {
          throw new FleetError(`symlink ${rel} points outside the bundle directory`, { ...ctx, file: rel });
        }
        isDir = fs.statSync(real).isDirectory();
      }
      if (rules.some((r) => r(entry.name, isDir))) continue;
      if (isDir) {
        visit(abs, rel, rules);
      } else if (!exclude.includes(rel)) {
        files.push(fileContent(rel, fs.readFileSync(abs)));
      }
    }
  };
  visit(bundleDir, "", []);
  return files;
}

type IgnoreRule = (baseName: string, isDir: boolean) => boolean;

function readFleetIgnore(dir: string): IgnoreRule[] {
  const file = path.join(dir, ".fleetignore");
  if (!fs.existsSync(file)) return [];
  const rules: IgnoreRule[] = [];
  for (const raw of fs.readFileSync(file, "utf8").split(/\r?\n/)) {
    const line = raw.replace(/([^\\])\s+$/, "$1");
    if (line === "" || line.startsWith("#")) continue;
    const dirPattern = /^(.+)\/\*$/.exec(line);
    if (dirPattern) {
      rules.push((name, isDir) => isDir && name === dirPattern[1]);
    } else {
      const isMatch = picomatch(line, { dot: true, nobrace: true, noextglob: true });
      rules.push((name) => isMatch(name));
    }
  }
  return rules;
}

/** Text as is; anything that is not valid UTF-8 (a chart archive in charts/) as base64. */
function fileContent(name: string, data: Buffer): BundleFile {
  const text = data.toString("utf8");
  return Buffer.from(text, "utf8").equals(data) ? { name, content: text } : { name, content: data.toString("base64"), encoding: "base64" };
}
