/**
 * Bundle discovery, Fleet's rules (fleet apply): each GitRepo path is a glob of directories; under it,
 * the path itself is a bundle when it has a fleet.yaml, or when it (or a subdirectory without its own
 * fleet.yaml) directly holds .yaml/.yml files; a subdirectory is a bundle when it has a fleet.yaml.
 * Every look at the tree goes through the checkout (checkout.ts): nothing outside it is ever seen.
 */
import { FleetError } from "../base/errors";
import { Checkout, joinRel } from "./checkout";
import { BadPattern, goMatch } from "./go-glob";

export const FLEET_YAML_NAMES = ["fleet.yaml", "fleet.yml"];

export function fleetYamlIn(checkout: Checkout, dir: string): string | undefined {
  return FLEET_YAML_NAMES.find((name) => checkout.kindOf(joinRel(dir, name)) === "file");
}

/** Bundle directories relative to the checkout, in Fleet's walk order; errors name the GitRepo and path. */
export function discoverBundleDirs(checkout: Checkout, paths: string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const pattern of paths.length ? paths : ["."]) {
    const matches = globDirs(checkout, pattern);
    if (matches.length === 0) {
      throw new FleetError(`path ${JSON.stringify(pattern)} matches no directory in the repository`, { gitRepo: checkout.gitRepo, field: "paths" });
    }
    for (const base of matches) {
      walk(checkout, base, base, (rel) => {
        if (!seen.has(rel)) {
          seen.add(rel);
          out.push(rel);
        }
      });
    }
  }
  return out;
}

/** Go's filepath.Glob relative to the checkout, keeping directories only, refusing anything outside it. */
function globDirs(checkout: Checkout, pattern: string): string[] {
  const clean = pattern.replace(/^\/+/, "") || ".";
  const parts = clean.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) throw new FleetError(`path ${JSON.stringify(pattern)} escapes the repository`, { gitRepo: checkout.gitRepo, field: "paths" });
  let current = ["."];
  for (const part of parts) {
    const next: string[] = [];
    const magic = /[*?[\\]/.test(part);
    const isMatch = magic ? (name: string) => goMatch(part, name) : undefined;
    if (isMatch) {
      try {
        isMatch("");
      } catch (err) {
        if (err instanceof BadPattern)
          throw new FleetError(`path ${JSON.stringify(pattern)}: ${err.message} (Go's filepath.Glob)`, { gitRepo: checkout.gitRepo, field: "paths" });
        throw err;
      }
    }
    for (const dir of current) {
      if (!isMatch) {
        if (checkout.kindOf(joinRel(dir, part))) next.push(joinRel(dir, part));
      } else if (checkout.kindOf(dir) === "dir") {
        for (const e of checkout.list(dir)) if (isMatch(e.name)) next.push(joinRel(dir, e.name));
      }
    }
    current = next;
  }
  return current.filter((rel) => checkout.kindOf(rel) === "dir");
}

function walk(checkout: Checkout, base: string, rel: string, emit: (rel: string) => void): void {
  const isRoot = rel === base;
  if (isRoot ? fleetYamlIn(checkout, rel) !== undefined || hasResourcesWithoutFleetYaml(checkout, rel) : fleetYamlIn(checkout, rel) !== undefined) emit(rel);
  for (const entry of checkout.list(rel)) {
    // Fleet's walk does not follow symlinked directories.
    if (entry.kind === "dir" && !entry.symlink && entry.name !== ".git") walk(checkout, base, joinRel(rel, entry.name), emit);
  }
}

function hasResourcesWithoutFleetYaml(checkout: Checkout, dir: string): boolean {
  if (fleetYamlIn(checkout, dir) !== undefined) return false;
  for (const entry of checkout.list(dir)) {
    if (entry.kind === "dir") {
      if (!entry.symlink && hasResourcesWithoutFleetYaml(checkout, joinRel(dir, entry.name))) return true;
    } else if (/\.ya?ml$/.test(entry.name)) {
      return true;
    }
  }
  return false;
}
