#!/usr/bin/env bash
# The whole test suite: type check, unit tests (pure stages, real git), component tests (Pulumi mocks),
# the Go code's gofmt, vet and tests (the provider's apply, prune and wait on a local cluster of their
# own, scripts/go-tests.sh), then end-to-end tests with the real engine, in render mode and on three live local clusters (started
# once by the mocha global fixture; PostgreSQL for the shared-state tests). Nothing skips itself: a missing
# tool fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests run their operations under the same Node options as `npm run up`.
source scripts/node-options.sh
# Every process this run starts carries its name, so the leftover check below counts this run's alone.
export PULUMI_FLEET_TEST_RUN=npm-test-$$-$(date +%s%N)
# Every temporary file the tests and what they start make lives in one directory of this run, removed
# when it ends (tests make thousands of directories: repositories, states, clusters). A run killed before
# its end leaves its directory: the next run removes those whose run is gone.
for stale in "${TMPDIR:-/tmp}"/pf-test-run-*; do
  run_pid=${stale##*/pf-test-run-}
  run_pid=${run_pid%%-*}
  if [ -d "$stale" ] && [ -O "$stale" ] && [ ! -d "/proc/$run_pid" ]; then rm -rf "$stale" || true; fi
done
run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/pf-test-run-$$-XXXXXX")
# Others may pass through it, not list it: the local PostgreSQL runs as the postgres account when we are root.
chmod 711 "$run_tmp"
export TMPDIR=$run_tmp
leftovers=$(mktemp)
trap 'rm -rf "$run_tmp"' EXIT
node scripts/run-ts.js scripts/check-leftovers.ts --snapshot "$leftovers"
echo "== typecheck"
tsc --noEmit -p .
echo "== lint and format (eslint.config.mjs: typescript-eslint's recommended rules; .prettierrc.json: npm run format rewrites)"
eslint .
prettier --check . >/dev/null || { prettier --list-different .; echo "these files are not formatted: npm run format" >&2; exit 1; }
echo "== unit + component tests"
mocha --config test/.mocharc.json 'test/unit/**/*.test.ts' 'test/components/**/*.test.ts'
echo "== Go module graph shared by fleet-render and fleet-provider (tools/workspace/go.work: Fleet's versions, each package compiled once)"
node scripts/go-workspace.js --check
echo "== Go: gofmt, go vet and the tests of every Go tool with our code; the provider's apply, prune and wait from Go on one local cluster (scripts/go-tests.sh)"
bash scripts/go-tests.sh
echo "== end-to-end tests (real Pulumi engine; live clusters from tools/build-clusters.sh)"
bash tools/build-clusters.sh
bash scripts/ensure-postgres.sh
bash scripts/ensure-chromium.sh
mocha --config test/.mocharc.json --timeout 600000 --require test/support/live-clusters.fixture.js 'test/e2e/**/*.test.ts'
echo "== no process left running"
node scripts/run-ts.js scripts/check-leftovers.ts --check "$leftovers"
