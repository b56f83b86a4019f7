/**
 * The one way GitRepo content is read from disk. A checkout is untrusted (whoever can push to the
 * GitRepo wrote it), so nothing in core/bundles touches `fs` with a path that came from it: every
 * path is resolved here, one component at a time with lstat, and a symlink is followed as text
 * inside the checkout (an absolute target, or one that climbs out, is refused before anything is
 * read). Only regular files are read (a FIFO or a device such as /dev/zero is refused), each read is
 * bounded, and what a checkout may hold in total is bounded too; every refusal is a FleetError naming
 * the GitRepo, the file and the limit.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { FleetError } from "../base/errors";
import { positiveNumber } from "../base/operator-env";

/** Bounds on what one checkout may make the runner read (the operator's, see contentLimits()). */
export interface ContentLimits {
  /** One file. */
  fileBytes: number;
  /** All the files of one bundle (its own and its pulled charts'). */
  bundleBytes: number;
  /** Everything read from one checkout. */
  checkoutBytes: number;
  /** Files of a commit (before its tree is written) and directory entries visited in one checkout. */
  entries: number;
  /** A commit's files together, before its tree is written to disk (core/source/git.ts). */
  treeBytes: number;
  /** Directories in a path, counting its last name (a file at `a/b/c.yaml` is 3 deep). */
  pathDepth: number;
  /** Steps (characters compared) of matching .fleetignore patterns against names, in one checkout. */
  ignoreSteps: number;
}

const MiB = 1024 * 1024;
export const DEFAULT_CONTENT_LIMITS: ContentLimits = {
  fileBytes: 16 * MiB,
  bundleBytes: 64 * MiB,
  checkoutBytes: 512 * MiB,
  entries: 200_000,
  treeBytes: 2048 * MiB,
  pathDepth: 128,
  ignoreSteps: 100_000_000,
};

/**
 * The operator's limits: PULUMI_FLEET_MAX_FILE_MIB, _MAX_BUNDLE_MIB, _MAX_CHECKOUT_MIB, _MAX_ENTRIES,
 * _MAX_TREE_MIB, _MAX_PATH_DEPTH, _MAX_IGNORE_STEPS (never content).
 */
export function contentLimits(env: NodeJS.ProcessEnv = process.env): ContentLimits {
  const d = DEFAULT_CONTENT_LIMITS;
  const mibOf = (name: string, fallback: number) => Math.floor(positiveNumber(env, name, fallback / MiB) * MiB);
  return {
    fileBytes: mibOf("PULUMI_FLEET_MAX_FILE_MIB", d.fileBytes),
    bundleBytes: mibOf("PULUMI_FLEET_MAX_BUNDLE_MIB", d.bundleBytes),
    checkoutBytes: mibOf("PULUMI_FLEET_MAX_CHECKOUT_MIB", d.checkoutBytes),
    entries: Math.floor(positiveNumber(env, "PULUMI_FLEET_MAX_ENTRIES", d.entries)),
    treeBytes: mibOf("PULUMI_FLEET_MAX_TREE_MIB", d.treeBytes),
    pathDepth: Math.floor(positiveNumber(env, "PULUMI_FLEET_MAX_PATH_DEPTH", d.pathDepth)),
    ignoreSteps: Math.floor(positiveNumber(env, "PULUMI_FLEET_MAX_IGNORE_STEPS", d.ignoreSteps)),
  };
}

export type EntryKind = "file" | "dir";
/** A directory entry; `refused` says why it cannot be read (a broken or escaping symlink, a device). */
export interface Entry {
  name: string;
  kind: EntryKind | "refused";
  symlink: boolean;
  refused?: string;
}

const MAX_LINK_HOPS = 40; // as the kernel's ELOOP

export class Checkout {
  readonly root: string;
  private readBytes = 0;
  private visited = 0;
  /** Directories already looked up, by name from the root (each once: resolveParts). */
  private readonly rootDir: DirNode = { parent: undefined, name: "", children: new Map() };
  /** .fleetignore matching done in this checkout, against limits.ignoreSteps (content.ts). */
  readonly ignoreMatching = { steps: 0 };

  constructor(
    root: string,
    readonly gitRepo: string,
    readonly limits: ContentLimits = contentLimits(),
  ) {
    this.root = fs.realpathSync(root); // the operator's path: trusted
  }

  private fail(rel: string, reason: string): never {
    throw new FleetError(reason, { gitRepo: this.gitRepo, file: rel || "." });
  }

  /**
   * Where `rel` (a path inside the checkout, `/`-separated) really is, inside the checkout, and what
   * it is; undefined when it does not exist. A symlink pointing outside, an absolute one, a loop, a
   * path deeper than limits.pathDepth, or anything but a file or directory is an error.
   */
  resolve(rel: string): { rel: string; kind: EntryKind } | undefined {
    const parts = splitRel(rel, () => this.fail(rel, `path ${JSON.stringify(rel)} leaves the repository`));
    const at = this.resolveParts(parts, rel, { hops: 0 });
    return at && { rel: at.kind === "file" ? at.rel : realPathOf(at.dir), kind: at.kind };
  }

  /**
   * Each directory is looked up once: its parent's node, then one lstat. Resolving every component of
   * every path from the root again made a walk of a tree `depth` deep cost depth cubed (800: 120 s).
   * A node remembers how many symlinks its path followed, so the 40-link limit counts as without it.
   */
  private resolveParts(parts: string[], rel: string, hops: { hops: number }): { kind: "dir"; dir: DirNode } | { kind: "file"; rel: string } | undefined {
    if (parts.length > this.limits.pathDepth) this.failDepth(rel);
    let dir = this.rootDir;
    for (let i = 0; i < parts.length; i++) {
      const name = parts[i];
      const last = i === parts.length - 1;
      let next = dir.children.get(name);
      if (!next) {
        const found = this.lookUp(dir, name, rel, hops);
        if (!found) return undefined;
        if (found.kind === "file") return last ? { kind: "file", rel: found.rel } : undefined; // a file used as a directory: not found, as ENOTDIR
        next = found.child;
        dir.children.set(name, next);
      } else {
        hops.hops += next.hops;
      }
      if (hops.hops > MAX_LINK_HOPS) this.fail(rel, `${rel}: too many levels of symlinks`);
      dir = next.dir;
    }
    return { kind: "dir", dir };
  }

  /** `name` in the directory `dir`, by lstat; a symlink's target is resolved from `dir`. */
  private lookUp(
    dir: DirNode,
    name: string,
    rel: string,
    hops: { hops: number },
  ): { kind: "dir"; child: DirChild } | { kind: "file"; rel: string } | undefined {
    const real = joinRel(realPathOf(dir), name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(path.join(this.root, real));
    } catch {
      return undefined;
    }
    if (st.isDirectory()) return { kind: "dir", child: { dir: { parent: dir, name, children: new Map() }, hops: 0 } };
    if (st.isSymbolicLink()) {
      const before = hops.hops;
      if (++hops.hops > MAX_LINK_HOPS) this.fail(rel, `symlink ${real}: too many levels of symlinks`);
      const target = fs.readlinkSync(path.join(this.root, real));
      const outside = () => this.fail(rel, `symlink ${real} points outside the repository (${JSON.stringify(target)})`);
      if (path.isAbsolute(target)) outside();
      const at = this.resolveParts(splitRel(joinRel(realPathOf(dir), target), outside), rel, hops);
      if (!at || at.kind === "file") return at;
      return { kind: "dir", child: { dir: at.dir, hops: hops.hops - before } };
    }
    if (!st.isFile()) this.fail(rel, `${real} is not a regular file or directory`);
    return { kind: "file", rel: real };
  }

  private failDepth(rel: string): never {
    this.fail(rel, `path is more than ${this.limits.pathDepth} directories deep (limit PULUMI_FLEET_MAX_PATH_DEPTH)`);
  }

  kindOf(rel: string): EntryKind | undefined {
    return this.resolve(rel)?.kind;
  }

  /** A directory's entries, sorted by name, each resolved; what cannot be read is `refused`, with the reason. */
  list(relDir: string): Entry[] {
    const dir = this.resolve(relDir);
    if (dir?.kind !== "dir") this.fail(relDir, `${relDir || "."} is not a directory`);
    const names = fs.readdirSync(path.join(this.root, dir.rel)).sort();
    // Entries deeper than the limit would be refused one by one, and a walk would skip them unseen.
    if (names.length && splitRel(relDir, () => this.fail(relDir, "leaves the repository")).length + 1 > this.limits.pathDepth)
      this.failDepth(joinRel(relDir, names[0]));
    this.visited += names.length;
    if (this.visited > this.limits.entries)
      this.fail(relDir, `the repository has more than ${this.limits.entries} files and directories (limit PULUMI_FLEET_MAX_ENTRIES)`);
    return names.map((name) => {
      const rel = joinRel(relDir, name);
      const symlink = fs.lstatSync(path.join(this.root, dir.rel, name)).isSymbolicLink();
      try {
        const kind = this.resolve(rel)?.kind;
        return kind ? { name, kind, symlink } : { name, kind: "refused", symlink, refused: `symlink ${rel} is broken` };
      } catch (err) {
        return { name, kind: "refused", symlink, refused: err instanceof FleetError ? err.reason : String(err) };
      }
    });
  }

  /** A regular file's bytes, bounded per file and per checkout. */
  read(rel: string): Buffer {
    const at = this.resolve(rel);
    if (!at) this.fail(rel, `file not found`);
    if (at.kind !== "file") this.fail(rel, `${rel} is a directory`);
    const fd = fs.openSync(path.join(this.root, at.rel), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) this.fail(rel, `${rel} is not a regular file`);
      const max = this.limits.fileBytes;
      if (st.size > max) this.fail(rel, `file is ${mib(st.size)}, over the limit of ${mib(max)} per file (PULUMI_FLEET_MAX_FILE_MIB)`);
      const buf = Buffer.alloc(Math.min(st.size, max) + 1);
      let n = 0;
      for (let got = -1; got !== 0 && n < buf.length; n += got) got = fs.readSync(fd, buf, n, buf.length - n, null);
      if (n > max) this.fail(rel, `file grew over the limit of ${mib(max)} per file while read (PULUMI_FLEET_MAX_FILE_MIB)`);
      this.readBytes += n;
      if (this.readBytes > this.limits.checkoutBytes) {
        this.fail(rel, `the repository's files add up to more than ${mib(this.limits.checkoutBytes)} (limit PULUMI_FLEET_MAX_CHECKOUT_MIB)`);
      }
      return buf.subarray(0, n);
    } finally {
      fs.closeSync(fd);
    }
  }

  readText(rel: string): string {
    return this.read(rel).toString("utf8");
  }

  /** Whether `rel` resolves to somewhere under `relDir` (Fleet's rule for symlinks in a bundle). */
  isInside(rel: string, relDir: string): boolean {
    const real = this.resolve(rel)?.rel;
    const base = this.resolve(relDir)?.rel;
    if (real === undefined || base === undefined) return false;
    return base === "" || real === base || real.startsWith(base + "/");
  }
}

/** A real directory of the checkout (no symlink in its path): its parent and the names looked up in it. */
interface DirNode {
  parent: DirNode | undefined;
  name: string;
  children: Map<string, DirChild>;
}

/** What a name in a directory resolved to, and through how many symlinks. */
interface DirChild {
  dir: DirNode;
  hops: number;
}

/** A node's path from the checkout's root, built when asked (stored per node, paths would cost depth squared). */
function realPathOf(dir: DirNode): string {
  const names: string[] = [];
  for (let d: DirNode | undefined = dir; d?.parent; d = d.parent) names.push(d.name);
  return names.reverse().join("/");
}

/** `a/./b/../c` -> [a, c]; a path that climbs above the root calls `escape`. */
function splitRel(rel: string, escape: () => never): string[] {
  const out: string[] = [];
  for (const part of rel.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (!out.length) escape();
      out.pop();
    } else {
      out.push(part);
    }
  }
  return out;
}

export function joinRel(dir: string, name: string): string {
  return dir === "" || dir === "." ? name : `${dir}/${name}`;
}

export function mib(bytes: number): string {
  return `${(bytes / MiB).toFixed(bytes < MiB ? 2 : 0)} MiB`;
}
