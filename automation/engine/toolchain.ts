/**
 * The Pulumi engine this project runs: the CLI and Kubernetes provider that tools/build-pulumi.sh
 * builds from pinned Go modules (or reuses), with an isolated PULUMI_HOME. A missing or broken
 * toolchain is an error with the build script's own output, never a skipped step. On Linux the CLI
 * is run under proc-guard (automation/engine/process-guard.ts), so nothing it starts outlives the operation.
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { PulumiCommand } from "@pulumi/pulumi/automation";
import { runInGroup } from "../../core/base/child-group";
import { PROJECT_DIR } from "../../core/base/project-dir";
import { guardedCliRoot, guardSupported } from "./process-guard";
import { isKubernetesProviders, KUBERNETES_PROVIDER_TYPE } from "../../core/migrate/legacy-resources";

export interface Toolchain {
  /**
   * Directory holding the bin/pulumi every command runs (PulumiCommand.get({ root }), `npm run pulumi`):
   * on Linux proc-guard running `cli`, else `cli`'s own root.
   */
  root: string;
  /** The CLI binary itself (tools/build-pulumi.sh's, or the system's). */
  cli: string;
  /** Environment for every engine process: PATH, PULUMI_HOME, update check and plugin download off. */
  env: Record<string, string>;
  /** The CLI's version as the build script knows it (undefined for a system CLI it could not ask). */
  version?: string;
}

let cached: Toolchain | undefined;

export function toolchain(): Toolchain {
  if (cached) return cached;
  // scripts/setup.sh ran the same script moments ago when it started this process (the operations' npm scripts).
  let printed = process.env.PULUMI_FLEET_TOOLCHAIN_ENV ?? "";
  if (!printed)
    try {
      printed = execFileSync("bash", [path.join(PROJECT_DIR, "tools/build-pulumi.sh"), "--env"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
        env: process.env,
      });
    } catch (err) {
      throw new Error(
        `the Pulumi toolchain could not be built or found (tools/build-pulumi.sh failed: ${(err as Error).message.split("\n")[0]}). ` +
          "Run `npm run tools` to see the build output.",
      );
    }
  const env: Record<string, string> = {};
  for (const line of printed.split("\n")) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line.trim());
    if (!m) continue;
    // Values are printed with bash's %q; ours are plain paths and words, optionally followed by :"$PATH".
    env[m[1]] = m[2].replace(/:"\$PATH"$/, `:${process.env.PATH ?? ""}`).replace(/^'(.*)'$/, "$1");
  }
  if (!env.PULUMI_FLEET_PULUMI_ROOT || !env.PULUMI_HOME) throw new Error(`tools/build-pulumi.sh --env printed no toolchain paths:\n${printed}`);
  // The program registers its providers with the version of pulumi-fleet's provider this checkout built
  // (components/pair.ts): inline programs run in this process.
  if (env.PULUMI_FLEET_PROVIDER_VERSION) process.env.PULUMI_FLEET_PROVIDER_VERSION = env.PULUMI_FLEET_PROVIDER_VERSION;
  const cli = path.join(env.PULUMI_FLEET_PULUMI_ROOT, "bin", "pulumi");
  cached = { root: guardSupported() ? guardedCliRoot(cli) : env.PULUMI_FLEET_PULUMI_ROOT, cli, env, version: env.PULUMI_FLEET_PULUMI_VERSION };
  return cached;
}

let command: Promise<PulumiCommand> | undefined;

/**
 * The CLI as the Automation API runs it, once per process. The SDK's PulumiCommand.get starts the CLI to
 * ask its version (0.14 s of every operation); the toolchain's build script already knows it, so the
 * command is made with that version (the SDK's own constructor and semver), and only a CLI of unknown
 * version is asked.
 */
export function pulumiCommand(tools: Toolchain = toolchain()): Promise<PulumiCommand> {
  if (!command) {
    const known = tools.version ? parseVersion(tools.version) : undefined;
    command = known
      ? Promise.resolve(
          new (PulumiCommand as unknown as new (cli: string, version: unknown) => PulumiCommand)(path.resolve(tools.root, "bin", "pulumi"), known),
        )
      : PulumiCommand.get({ root: tools.root });
    command.catch(() => {
      command = undefined;
    });
  }
  return command;
}

/** A version as the SDK's semver parses it (its own copy of the package, whose SemVer the SDK compares). */
function parseVersion(version: string): unknown {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- resolved from the SDK's own directory at run time
  const semver = require(require.resolve("semver", { paths: [path.dirname(require.resolve("@pulumi/pulumi"))] })) as { parse(v: string): unknown };
  const parsed = semver.parse(version);
  if (!parsed) throw new Error(`tools/build-pulumi.sh printed PULUMI_FLEET_PULUMI_VERSION=${version}, which is not a version`);
  return parsed;
}

let kubernetesProvider: Promise<void> | undefined;

/**
 * Whether a stack's state holds resources only the Kubernetes provider can manage: an earlier version's
 * custom resources or its provider instances. Only such a stack needs that provider built; a state the
 * migration moved (core/migrate) holds none where all its clusters are still configured.
 */
export function needsKubernetesProvider(resources: readonly { type: string; custom?: boolean }[]): boolean {
  return resources.some((r) => r.type === KUBERNETES_PROVIDER_TYPE || (r.custom === true && isKubernetesProviders(r.type)));
}

/**
 * Build (or reuse) the Kubernetes provider, once per process, and say why: tools/build-pulumi.sh leaves it
 * out unless asked, since a new stack never loads it. It lands in the toolchain's PULUMI_HOME, where the
 * engine looks plugins up by name and version. The build takes minutes on a new machine: it runs as a
 * child group (core/base/child-group.ts), so the event loop keeps serving (a watcher's status page, open
 * connections, a stop signal) meanwhile; a failed build is tried again by the next call.
 */
export function ensureKubernetesProvider(stack: string): Promise<void> {
  kubernetesProvider ??= buildKubernetesProvider(stack).catch((err) => {
    kubernetesProvider = undefined;
    throw err;
  });
  return kubernetesProvider;
}

async function buildKubernetesProvider(stack: string): Promise<void> {
  process.stderr.write(`stack ${stack} holds resources of an earlier version's Kubernetes provider: building it once to move them\n`);
  const script = "tools/build-pulumi.sh --k8s-provider";
  const outcome = await runInGroup("bash", [path.join(PROJECT_DIR, "tools/build-pulumi.sh"), "--k8s-provider"], {
    name: script,
    maxOutputBytes: 4 * 1024 * 1024,
    stderrKeptBytes: 4096,
  });
  if (outcome.code === 0 && !outcome.stopped) return;
  const why = outcome.stopped ?? (outcome.stderr.trim().split("\n").pop() || `exit status ${outcome.code}`);
  throw new Error(`the Kubernetes provider could not be built (${script} failed: ${why}); run \`bash ${script}\` to see the build output`);
}
