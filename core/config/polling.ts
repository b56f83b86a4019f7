/**
 * `gitRepos[].pollingInterval` and `disablePolling`, as Fleet's GitRepo has them: how often the watcher
 * (`npm run watch`, automation/watch/) asks the GitRepo's remote for its commit. Fleet's field is a Go
 * duration ("15s", "1m30s"; "0" is the default) and so is this one. Fleet takes any positive duration;
 * here at least MIN_POLLING_INTERVAL_MS: each poll starts a `git ls-remote`, and an `up` takes seconds,
 * so polling faster deploys nothing sooner.
 */
import { Field } from "./reader";

/** Fleet's default (gitjob_controller.go defaultPollingSyncInterval). */
export const DEFAULT_POLLING_INTERVAL_MS = 15_000;
export const MIN_POLLING_INTERVAL_MS = 1_000;
/** Fleet's CRD bound (2562047h, the largest Go duration). */
const MAX_DURATION_MS = 2_562_047 * 3_600_000;

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;

/** A Go duration in milliseconds ("0" is 0), or undefined when the text is not one (Fleet's CRD pattern). */
export function parseGoDuration(text: string): number | undefined {
  if (text === "0") return 0;
  if (!DURATION.test(text)) return undefined;
  let ms = 0;
  for (const m of text.matchAll(/([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(m[1]) * UNIT_MS[m[2]];
  return ms;
}

export interface PollingSettings {
  /** Milliseconds between polls; absent: DEFAULT_POLLING_INTERVAL_MS. */
  pollingInterval?: number;
  /** Fleet's disablePolling: the watcher never polls this GitRepo (its commits deploy with the next `up` for another reason). */
  disablePolling?: boolean;
}

/** The GitRepo's polling settings, set only when the stack file sets them. */
export function readPolling(repo: Field): PollingSettings {
  const out: PollingSettings = {};
  const f: Field = repo.child("pollingInterval");
  const text = f.optString();
  if (text !== undefined) {
    const ms = parseGoDuration(text);
    if (ms === undefined || ms > MAX_DURATION_MS) f.fail(`${JSON.stringify(text)} is not a Go duration (e.g. 15s, 5m, 1h30m; units ns, us, ms, s, m, h)`);
    if (ms > 0 && ms < MIN_POLLING_INTERVAL_MS)
      f.fail(`${JSON.stringify(text)} is below the minimum of ${MIN_POLLING_INTERVAL_MS / 1000}s (an up takes seconds: polling faster deploys nothing sooner)`);
    if (ms > 0) out.pollingInterval = ms;
  }
  if (repo.child("disablePolling").bool()) out.disablePolling = true;
  return out;
}
