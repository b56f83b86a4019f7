/**
 * `metrics`: where each operation leaves the fleet's state and its own outcome as Prometheus metrics
 * (automation/metrics/): files for node_exporter's textfile collector, and a Pushgateway, as batch jobs
 * report. The operator's setting, in the stack file; nothing of it reaches the clusters.
 */
import * as path from "node:path";
import { Field } from "./reader";
import { keysOf, tableOf } from "./field-table";
import { METRICS_FIELDS } from "./stack-fields";
import { httpUrlProblem } from "./http-url";

export interface PushgatewayConfig {
  /** The Pushgateway's base URL (http or https), or undefined when `urlFromEnv` names it. */
  url?: string;
  /** The environment variable holding the URL (it may carry credentials: user:password@host). */
  urlFromEnv?: string;
  /** The `job` grouping label (default pulumi-fleet). */
  job: string;
  /** Per attempt (default 10). */
  timeoutSeconds: number;
}

export interface MetricsConfig {
  /** node_exporter's textfile collector directory: the files are written there, one set per stack. */
  textfileDirectory?: string;
  pushgateway?: PushgatewayConfig;
}

/** The grouping label's value must be a Pushgateway path segment we write as is. */
const JOB = /^[a-zA-Z_][a-zA-Z0-9_.-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function readMetrics(f: Field, baseDir: string): MetricsConfig | undefined {
  if (!f.present) return undefined;
  f.object(keysOf(METRICS_FIELDS));
  const dir = f.child("textfileDirectory").optString();
  if (dir === "") f.child("textfileDirectory").fail("must not be empty");
  const pushgateway = readPushgateway(f.child("pushgateway"));
  if (dir === undefined && !pushgateway) f.fail("names neither textfileDirectory nor pushgateway: say where the metrics go, or remove it");
  return { ...(dir !== undefined ? { textfileDirectory: path.resolve(baseDir, dir) } : {}), ...(pushgateway ? { pushgateway } : {}) };
}

function readPushgateway(f: Field): PushgatewayConfig | undefined {
  if (!f.present) return undefined;
  f.object(keysOf(tableOf(METRICS_FIELDS.pushgateway)));
  const url = f.child("url").optString();
  const urlFromEnv = f.child("urlFromEnv").optString();
  if ((url === undefined) === (urlFromEnv === undefined)) f.fail("needs exactly one of url and urlFromEnv");
  if (url !== undefined) {
    const problem = urlProblem(url);
    if (problem) f.child("url").fail(problem);
    if (new URL(url).username || new URL(url).password)
      f.child("url").fail("carries credentials: keep them out of the stack file with urlFromEnv (an environment variable holding the URL)");
  }
  if (urlFromEnv !== undefined && !ENV_NAME.test(urlFromEnv))
    f.child("urlFromEnv").fail(`must be an environment variable's name (got ${JSON.stringify(urlFromEnv)})`);
  const job = f.child("job").optString() ?? "pulumi-fleet";
  if (!JOB.test(job)) f.child("job").fail(`must be letters, digits, "_", "." or "-", starting with a letter or "_" (got ${JSON.stringify(job)})`);
  const timeoutSeconds = f.child("timeoutSeconds").optNumber() ?? 10;
  if (timeoutSeconds <= 0 || timeoutSeconds > 300) f.child("timeoutSeconds").fail(`must be more than 0 and at most 300 (got ${timeoutSeconds})`);
  return { ...(url !== undefined ? { url } : {}), ...(urlFromEnv !== undefined ? { urlFromEnv } : {}), job, timeoutSeconds };
}

/** Why a Pushgateway URL cannot be used, or undefined. */
export function urlProblem(url: string): string | undefined {
  return httpUrlProblem(url, { queryOrFragment: ": the grouping key is appended to its path" });
}
