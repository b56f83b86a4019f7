/**
 * Bundle discovery, Fleet's rules (fleet apply): each GitRepo path is a glob of directories; under it,
 * the path itself is a bundle when it has a fleet.yaml, or when it (or a subdirectory without its own
 * fleet.yaml) directly holds .yaml/.yml files; a subdirectory is a bundle when it has a fleet.yaml.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import picomatch from "picomatch";
import { FleetError } from "../errors";

export const FLEET_YAML_NAMES = ["fleet.yaml", "fleet.yml"];

export function fleetYamlIn(dir: string): string | undefined {
  for (const name of FLEET_YAML_NAMES) {
    const p = path.join(dir, name);
    if (fs.existsSync(p) && fs.statSync(p).isFile()) return name;
  }
  return undefined;
}

/** Bundle directories relative to `root`, in Fleet's walk order; errors name the GitRepo and path. */
export function discoverBundleDirs(root: string, paths: string[], gitRepo: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const pattern of paths.length ? paths : ["."]) {
    const matches = globDirs(root, pattern, gitRepo);
    if (matches.length === 0) {
      throw new FleetError(`path ${JSON.stringify(pattern)} matches no directory in the repository`, { gitRepo, field: "paths" });
    }
    for (const base of matches) {
      walk(root, base, base, (rel) => {
        if (!seen.has(rel)) {
          seen.add(rel);
          out.push(rel);
        }
      });
    }
  }
  return out;
}

/** Go's filepath.Glob relative to root, keeping directories only, refusing anything outside root. */
function globDirs(root: string, pattern: string, gitRepo: string): string[] {
  const clean = pattern.replace(/^\/+/, "") || ".";
  const parts = clean.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) throw new FleetError(`path ${JSON.stringify(pattern)} escapes the repository`, { gitRepo, field: "paths" });
  let current = ["."];
  for (const part of parts) {
    const next: string[] = [];
    const magic = /[*?[\\]/.test(part);
    const isMatch = magic ? picomatch(part, { dot: true, nobrace: true, noextglob: true }) : undefined;
    for (const dir of current) {
      const abs = path.join(root, dir);
      if (!isMatch) {
        if (fs.existsSync(path.join(abs, part))) next.push(joinRel(dir, part));
        continue;
      }
      let entries: string[] = [];
      try {
        entries = fs.readdirSync(abs).sort();
      } catch {
        continue;
      }
      for (const e of entries) if (isMatch(e)) next.push(joinRel(dir, e));
    }
    current = next;
  }
  const realRoot = fs.realpathSync(root);
  return current.filter((rel) => {
    const abs = path.join(root, rel);
    if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) return false;
    const real = fs.realpathSync(abs);
    if (real !== realRoot && !real.startsWith(realRoot + path.sep)) {
      throw new FleetError(`path ${JSON.stringify(pattern)} resolves outside the repository (${rel} is a symlink out)`, { gitRepo, field: "paths" });
    }
    return true;
  });
}

function joinRel(dir: string, name: string): string {
  return dir === "." ? name : `${dir}/${name}`;
}

function walk(root: string, base: string, rel: string, emit: (rel: string) => void): void {
  const abs = path.join(root, rel);
  const isRoot = rel === base;
  if (isRoot ? fleetYamlIn(abs) !== undefined || hasResourcesWithoutFleetYaml(abs) : fleetYamlIn(abs) !== undefined) emit(rel);
  for (const entry of fs.readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.isDirectory() && entry.name !== ".git") walk(root, base, joinRel(rel, entry.name), emit);
  }
}

function hasResourcesWithoutFleetYaml(dir: string): boolean {
  if (fleetYamlIn(dir) !== undefined) return false;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (hasResourcesWithoutFleetYaml(path.join(dir, entry.name))) return true;
    } else if (/\.ya?ml$/.test(entry.name)) {
      return true;
    }
  }
  return false;
}
