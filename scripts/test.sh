#!/usr/bin/env bash
# The whole test suite: type check, unit tests (pure stages, real git), component tests (Pulumi mocks),
# then end-to-end tests with the real engine, in render mode and on three live local clusters (started
# once by the mocha global fixture; PostgreSQL for the shared-state tests). Nothing skips itself: a missing
# tool fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every process this run starts carries its name, so the leftover check below counts this run's alone.
export PULUMI_FLEET_TEST_RUN=npm-test-$$-$(date +%s%N)
leftovers=$(mktemp)
trap 'rm -f "$leftovers"' EXIT
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
echo "== Go unit tests of pulumi-fleet's provider (tools/fleet-provider: its decisions) and of fleet-render (owners, value files, job bounds), in that graph"
(cd tools/fleet-provider && GOTOOLCHAIN=local GOWORK="$PWD/../workspace/go.work" CGO_ENABLED=0 go test -mod=readonly -count=1 ./...)
(cd tools/fleet-render && GOTOOLCHAIN=local GOWORK="$PWD/../workspace/go.work" CGO_ENABLED=0 go test -mod=readonly -count=1 ./...)
echo "== Go unit tests of fleet-sops (tools/fleet-sops: SOPS decryption with a GitRepo's age key)"
(cd tools/fleet-sops && GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 go test -mod=readonly -count=1 ./...)
echo "== Go unit tests of metrics-check (tools/metrics-check: Prometheus's text parser, which the metrics tests read through)"
(cd tools/metrics-check && GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 go test -mod=readonly -count=1 ./...)
echo "== Go unit tests of fleet-schedule (tools/fleet-schedule: maintenance windows, Fleet's cron library)"
(cd tools/fleet-schedule && GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 go test -mod=readonly -count=1 ./...)
echo "== end-to-end tests (real Pulumi engine; live clusters from tools/build-clusters.sh)"
bash tools/build-clusters.sh
bash scripts/ensure-postgres.sh
bash scripts/ensure-chromium.sh
mocha --config test/.mocharc.json --timeout 600000 --require test/support/live-clusters.fixture.js 'test/e2e/**/*.test.ts'
echo "== no process left running"
node scripts/run-ts.js scripts/check-leftovers.ts --check "$leftovers"
