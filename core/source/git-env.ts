/**
 * Everything a git process of the git source runs with, built from nothing: no program of the runner
 * may run for a checkout, and no credential of the runner may reach a remote.
 *
 * - No system or global configuration (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null, HOME and
 *   XDG_CONFIG_HOME in an empty temp dir, no system attributes), and none of the runner's GIT_*
 *   variables (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT, GIT_SSH_COMMAND, GIT_EXEC_PATH, ...): so no
 *   filter, textconv, fsmonitor, hooks path, credential helper, sshCommand, insteadOf, include,
 *   packObjectsHook or editor of the runner's. The only configuration left is the store's own (we
 *   create it) and the options below, passed the same way as the token's header.
 * - Only the protocols the operator's URL needs are allowed (`ext::` and the like never).
 * - Credentials are the stack's `auth` for this GitRepo only: the token as an HTTP header, the SSH
 *   key and known hosts in 0600 files; ssh reads no ssh_config, agent or default key of the runner.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { GitRepoConfig } from "../config/git-repo";
import { GitBounds } from "./git-bounds";

/** How slow a remote may be before it is given up (git-bounds.ts); the same for every protocol. */
export type LowSpeed = Pick<GitBounds, "lowSpeedBytes" | "lowSpeedSeconds">;

/** Options every git command gets (the repository's own config can only have what we wrote). */
const FIXED_CONFIG: [string, string][] = [
  ["core.hooksPath", "/dev/null"],
  ["core.fsmonitor", "false"],
  ["core.attributesFile", "/dev/null"],
  ["credential.helper", ""],
  // A fetch keeps what it receives as one pack (never loose objects), which the size bound watches.
  ["transfer.unpackLimit", "1"],
  // No gc or maintenance after a fetch: the source prunes the store itself (git-cache.ts).
  ["gc.auto", "0"],
  ["maintenance.auto", "false"],
];

/** Runner variables that are not git's and that git or ssh need: the search path, temp dir and proxies. */
const PASSED_THROUGH = /^(PATH|TMPDIR|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy)$/;

/**
 * The git protocols (protocol.<name>.allow) a URL needs; none for a URL git would hand to a remote
 * helper or command (`ext::`, `fd::`) or a scheme we do not serve.
 */
export function protocolsFor(url: string): string[] {
  if (/^[A-Za-z0-9+.-]+::/.test(url)) return [];
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase();
  if (scheme === "https") return ["https"];
  if (scheme === "http") return ["http", "https"];
  if (scheme === "ssh" || scheme === "git+ssh" || scheme === "ssh+git") return ["ssh"];
  if (scheme === "file") return ["file"];
  if (scheme === "git") return ["git"];
  if (scheme) return [];
  if (path.isAbsolute(url)) return ["file"];
  if (/^[^/:]+:/.test(url)) return ["ssh"]; // scp-like user@host:path
  return [];
}

/**
 * Whether git has no low-speed limit of its own for this URL (git://, ssh after the handshake): the
 * git process is then watched for output instead (git-process.ts idle), at the same low-speed time.
 */
export function watchedForSilence(url: string): boolean {
  return protocolsFor(url).some((p) => p === "git" || p === "ssh");
}

/** The configuration a git command runs with, as key/value pairs (see FIXED_CONFIG). */
export function gitConfigFor(url: string, lowSpeed: LowSpeed, token?: { username?: string; token: string }): [string, string][] {
  const config: [string, string][] = [...FIXED_CONFIG, ["protocol.allow", "never"]];
  const protocols = protocolsFor(url);
  for (const p of protocols) config.push([`protocol.${p}.allow`, "always"]);
  if (protocols.includes("https")) {
    // curl gives up a transfer slower than this (a remote that accepts and never answers included).
    config.push(["http.lowSpeedLimit", String(lowSpeed.lowSpeedBytes)], ["http.lowSpeedTime", String(lowSpeed.lowSpeedSeconds)]);
  }
  if (token) {
    const basic = Buffer.from(`${token.username ?? "git"}:${token.token}`).toString("base64");
    config.push(["http.extraHeader", `Authorization: Basic ${basic}`]);
  }
  return config;
}

/** The temp files of one resolution (empty HOME, SSH key, known hosts, CA), removed afterwards whatever happens. */
export class GitSession {
  private readonly tmp: string;
  private readonly vars: Record<string, string>;

  constructor(repo: GitRepoConfig, lowSpeed: LowSpeed) {
    this.tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-fleet-auth-"));
    const home = path.join(this.tmp, "home");
    fs.mkdirSync(home);
    const file = (name: string, content: string) => {
      fs.writeFileSync(path.join(this.tmp, name), content, { mode: 0o600 });
      return path.join(this.tmp, name);
    };
    const config = gitConfigFor(repo.repo, lowSpeed, repo.auth?.token ? { username: repo.auth.username, token: repo.auth.token } : undefined);
    this.vars = {
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, ".config"),
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_ATTR_NOSYSTEM: "1",
      GIT_TERMINAL_PROMPT: "0",
      LC_ALL: "C",
      GIT_CONFIG_COUNT: String(config.length),
      ...Object.fromEntries(
        config.flatMap(([k, v], i) => [
          [`GIT_CONFIG_KEY_${i}`, k],
          [`GIT_CONFIG_VALUE_${i}`, v],
        ]),
      ),
    };
    const auth = repo.auth;
    if (auth?.sshPrivateKey) {
      const key = file("key", auth.sshPrivateKey.endsWith("\n") ? auth.sshPrivateKey : `${auth.sshPrivateKey}\n`);
      const knownHosts = file("known_hosts", auth.knownHosts ?? "");
      const q = (p: string) => `'${p.replace(/'/g, "'\\''")}'`;
      this.vars.GIT_SSH_VARIANT = "ssh";
      this.vars.GIT_SSH_COMMAND =
        `ssh -F /dev/null -i ${q(key)} -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes ` +
        `-o StrictHostKeyChecking=yes -o UserKnownHostsFile=${q(knownHosts)} -o GlobalKnownHostsFile=/dev/null ` +
        // A host that accepts and never speaks (connect and banner), or stops answering, is given up at the low-speed time.
        `-o ConnectTimeout=${lowSpeed.lowSpeedSeconds} -o ServerAliveInterval=${Math.max(1, Math.ceil(lowSpeed.lowSpeedSeconds / 3))} -o ServerAliveCountMax=3`;
    }
    if (repo.caBundle) this.vars.GIT_SSL_CAINFO = file("ca.pem", repo.caBundle);
    if (repo.insecureSkipTLSVerify) this.vars.GIT_SSL_NO_VERIFY = "true";
  }

  env(): Record<string, string> {
    const passed: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && PASSED_THROUGH.test(k)) passed[k] = v;
    return { ...passed, ...this.vars };
  }

  dispose(): void {
    fs.rmSync(this.tmp, { recursive: true, force: true });
  }
}
