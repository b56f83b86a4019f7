/** Real git repositories in temporary directories, for tests of the source and bundle stages. */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { GitRepoConfig, gitRepoEntry } from "../../core/config/git-repo";

export function tempDir(prefix = "pf-test-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Writes each file (its directories made) under dir; null deletes it. */
export function writeFiles(dir: string, files: Record<string, string | null>): void {
  for (const [name, content] of Object.entries(files)) {
    const p = path.join(dir, name);
    if (content === null) fs.rmSync(p, { force: true });
    else {
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, content);
    }
  }
}

export class TestRepo {
  readonly dir: string;

  constructor(files: Record<string, string> = {}, branch = "master") {
    this.dir = tempDir("pf-repo-");
    this.git("init", "-q", "-b", branch);
    this.git("config", "user.email", "test@example.com");
    this.git("config", "user.name", "test");
    this.git("config", "commit.gpgsign", "false");
    if (Object.keys(files).length) this.commit(files, "initial");
  }

  git(...args: string[]): string {
    return execFileSync("git", args, { cwd: this.dir, encoding: "utf8", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } }).trim();
  }

  /** Writes files (null deletes), commits, returns the new commit SHA. */
  commit(files: Record<string, string | null>, message = "change"): string {
    writeFiles(this.dir, files);
    this.git("add", "-A");
    this.git("commit", "-q", "--allow-empty", "-m", message);
    return this.head();
  }

  symlink(target: string, name: string): string {
    const p = path.join(this.dir, name);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.symlinkSync(target, p);
    this.git("add", "-A");
    this.git("commit", "-q", "-m", `symlink ${name}`);
    return this.head();
  }

  head(): string {
    return this.git("rev-parse", "HEAD");
  }

  url(): string {
    return `file://${this.dir}`;
  }
}

export function gitRepoConfig(over: Partial<GitRepoConfig> & { repo: string }): GitRepoConfig {
  return gitRepoEntry("test", over.repo, over);
}

export const CONFIGMAP = (name: string, data: Record<string, string> = { k: "v" }) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${Object.entries(data)
    .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
    .join("\n")}\n`;
