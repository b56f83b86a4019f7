#!/usr/bin/env bash
# The whole test suite: type check, unit tests (pure stages, real git), component tests (Pulumi mocks),
# then end-to-end tests with the real engine. Nothing skips itself: a missing tool fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== typecheck"
tsc --noEmit -p .
echo "== unit + component tests"
mocha --config test/.mocharc.json 'test/unit/**/*.test.ts' 'test/components/**/*.test.ts'
if compgen -G 'test/e2e/*.test.ts' > /dev/null; then
  echo "== end-to-end tests (real Pulumi engine)"
  mocha --config test/.mocharc.json --timeout 600000 'test/e2e/**/*.test.ts'
fi
