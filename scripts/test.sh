#!/usr/bin/env bash
# The whole test suite: type check, unit tests (pure stages, real git), component tests (Pulumi mocks),
# then end-to-end tests with the real engine, in render mode and on three live local clusters (started
# once by the mocha global fixture; PostgreSQL for the shared-state tests). Nothing skips itself: a missing
# tool fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
# The live clusters' programs (kube-apiserver and friends, etcd, kwok: about 12 minutes of compile on a
# cold two-core machine) build in the background while setup (npm ci, fleet-render, the Pulumi CLI and
# provider), the type check and the unit tests run: each of those leaves a core idle during module
# downloads, links and single-threaded steps. Debian's PostgreSQL and Chromium (apt, network-bound)
# install in the background too. Their reports are printed before the end-to-end tests.
clusters_log=$(mktemp)
packages_log=$(mktemp)
bash tools/build-clusters.sh >"$clusters_log" 2>&1 &
clusters_pid=$!
(bash scripts/ensure-postgres.sh && bash scripts/ensure-chromium.sh) >"$packages_log" 2>&1 &
packages_pid=$!
trap 'for p in "$clusters_pid" "$packages_pid"; do pkill -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; done; rm -f "$clusters_log" "$packages_log"' EXIT
# wait_for PID LOG WHAT: the background step's report, or its failure with its output.
wait_for() {
  if ! wait "$1"; then
    cat "$2" >&2
    echo "$3 failed (its output is above)" >&2
    exit 1
  fi
  cat "$2" >&2
}
bash scripts/setup.sh
echo "== typecheck"
tsc --noEmit -p .
echo "== unit + component tests"
mocha --config test/.mocharc.json 'test/unit/**/*.test.ts' 'test/components/**/*.test.ts'
echo "== end-to-end tests (real Pulumi engine; live clusters from tools/build-clusters.sh)"
wait_for "$clusters_pid" "$clusters_log" "tools/build-clusters.sh"
wait_for "$packages_pid" "$packages_log" "installing PostgreSQL and Chromium (scripts/ensure-postgres.sh, ensure-chromium.sh)"
mocha --config test/.mocharc.json --timeout 600000 --require test/support/live-clusters.fixture.js 'test/e2e/**/*.test.ts'
