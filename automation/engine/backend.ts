/**
 * Where a stack's state lives: the user's backend when they name one (PULUMI_BACKEND_URL, or
 * `backend.url` in Pulumi.yaml, as the Pulumi CLI itself decides), else the embedded default, a file
 * backend in <project>/.pulumi-fleet/state (or PULUMI_FLEET_STATE_DIR). Every operation, the
 * `npm run pulumi` wrapper and the tests resolve it here, so both paths always see the same state.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { PROJECT_DIR } from "../../core/base/project-dir";

export interface BackendOptions {
  /** A backend URL chosen by the caller (file://, postgres://, s3://, ...): wins over everything. */
  backendUrl?: string;
  /** A file backend directory chosen by the caller (tests, benchmarks). */
  stateDir?: string;
}

export interface Backend {
  url: string;
  /** Where it was chosen, for messages ("PULUMI_BACKEND_URL", "Pulumi.yaml backend.url", ...). */
  source: string;
  /** The directory of a file backend; undefined for any other. */
  fileDir?: string;
  /** This machine's own files about the stack (the workspace, logs): never shared. */
  localDir: string;
}

const DEFAULT_STATE_DIR = path.join(PROJECT_DIR, ".pulumi-fleet", "state");

/** `backend.url` of the project's Pulumi.yaml, if set. */
export function projectBackendUrl(projectDir = PROJECT_DIR): string | undefined {
  const file = path.join(projectDir, "Pulumi.yaml");
  if (!fs.existsSync(file)) return undefined;
  const url = YAML.parse(fs.readFileSync(file, "utf8"))?.backend?.url;
  return typeof url === "string" && url !== "" ? url : undefined;
}

export function resolveBackend(options: BackendOptions = {}, env: NodeJS.ProcessEnv = process.env): Backend {
  const fromUrl = (url: string, source: string): Backend => {
    const fileDir = url.startsWith("file://") ? url.slice("file://".length).replace(/^~(?=\/)/, process.env.HOME ?? "~") : undefined;
    return { url, source, fileDir, localDir: fileDir ? path.join(fileDir, "..") : path.join(PROJECT_DIR, ".pulumi-fleet") };
  };
  if (options.backendUrl) return fromUrl(options.backendUrl, "the caller's backendUrl");
  if (options.stateDir) return fromUrl(`file://${path.resolve(options.stateDir)}`, "the caller's stateDir");
  if (env.PULUMI_BACKEND_URL) return fromUrl(env.PULUMI_BACKEND_URL, "PULUMI_BACKEND_URL");
  const project = projectBackendUrl();
  if (project) return fromUrl(project, "Pulumi.yaml backend.url");
  const dir = env.PULUMI_FLEET_STATE_DIR ? path.resolve(env.PULUMI_FLEET_STATE_DIR) : DEFAULT_STATE_DIR;
  return fromUrl(`file://${dir}`, env.PULUMI_FLEET_STATE_DIR ? "PULUMI_FLEET_STATE_DIR" : "the embedded default");
}

/** The URL with any password replaced, for messages and logs. */
export function redactedUrl(url: string): string {
  return url.replace(/^([a-z0-9+.-]+:\/\/[^:/@]*:)[^@/]*@/i, "$1***@");
}
