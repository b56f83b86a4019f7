#!/usr/bin/env bash
# pulumi-fleet's Go code held to the bar of its TypeScript (npm test runs this, scripts/test.sh):
# gofmt over every Go file we wrote, go vet and the tests of every Go module with our code, and the
# provider's live tests (apply, prune and wait from Go against a real API server: one local cluster,
# automation/clusters/local-clusters.ts, started here and stopped on exit).
#
#   bash scripts/go-tests.sh                       all of it
#   bash scripts/go-tests.sh --live [go test flags] only the provider's tests, live ones included (e.g. -run Prune -v)
#
# The live tests carry the build tag `live`, so a plain `go test ./...` in tools/fleet-provider stays
# pure; with the tag and no cluster (FLEET_PROVIDER_LIVE_KUBECONFIG unset) they fail, saying how to run them.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local CGO_ENABLED=0
# The project's Node (22, node_modules/.bin) first, as npm puts it, so the script also runs by hand.
export PATH="$PWD/node_modules/.bin:$PATH"

# The Go modules with our own code, each with the workspace it builds in (tools/workspace/go.work: fleet-render
# and the provider are one module graph; "off": the module's own go.mod). Left out: tools/control-plane,
# etcd, kwok, pulumi, language-nodejs and kubernetes only pin upstream programs (a go.mod, and for
# kubernetes upstream's entry point); vetting them would compile all of Kubernetes or the Kubernetes
# provider (minutes to 12 min cold) to check code that is not ours. gofmt still reads their .go files.
MODULES=(
  "tools/fleet-provider work"
  "tools/fleet-render work"
  "tools/fleet-sops off"
  "tools/fleet-schedule off"
  "tools/metrics-check off"
  "tools/proc-guard off"
  "test/fleet-schema/go-fields off"
)

in_module() { # in_module DIR WORK go ARGS...: a go command in a module, in its workspace
  local dir=$1 work=$2
  shift 2
  if [ "$work" = work ]; then
    (cd "$dir" && GOWORK="$PWD/../workspace/go.work" "$@")
  else
    (cd "$dir" && GOWORK=off "$@")
  fi
}

live_tests() { # the provider's tests with one local cluster (its pure tests run in the same binary)
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/pulumi-fleet-go-live.XXXXXX")
  trap "node scripts/run-ts.js scripts/clusters.ts down --dir '$dir' >/dev/null" EXIT
  node scripts/run-ts.js scripts/clusters.ts up --count 1 --dir "$dir" --skip-memory
  # -parallel 8: the tests wait on the cluster far more than they compute (the default is GOMAXPROCS).
  FLEET_PROVIDER_LIVE_KUBECONFIG="$dir/local-1/kubeconfig" \
    in_module tools/fleet-provider work go test -mod=readonly -count=1 -tags live -parallel 8 -timeout 10m "$@" ./...
}

# fleet-provider's and fleet-render's types of the boundary's schema (core/model/schema): generated, not committed.
tools_dir=$PWD/tools
# shellcheck source=tools/lib.sh
source tools/lib.sh
go_schema

if [ "${1:-}" = --live ]; then
  shift
  live_tests "$@"
  exit
fi

echo "-- gofmt: every Go file in git, and the generated ones"
mapfile -t files < <({ git ls-files --cached --others --exclude-standard '*.go'; ls tools/*/zz_generated_*.go; } | while read -r f; do if [ -f "$f" ]; then echo "$f"; fi; done)
unformatted=$(gofmt -l "${files[@]}")
if [ -n "$unformatted" ]; then
  echo "$unformatted"
  echo "these Go files are not formatted: gofmt -w <file>" >&2
  exit 1
fi

echo "-- go vet: ${MODULES[*]%% *} and test/support/go-match"
for m in "${MODULES[@]}"; do
  read -r dir work <<<"$m"
  # The provider's live tests are vetted too (build tag live).
  in_module "$dir" "$work" go vet -mod=readonly -tags live ./...
done
# A single file run with `go run` (test/unit/go-glob.test.ts), no module of its own.
(cd test/support/go-match && GOWORK=off GO111MODULE=off go vet main.go)

echo "-- go test: fleet-render (owners, value files, job bounds), fleet-sops (SOPS with a GitRepo's age key), fleet-schedule (maintenance windows), metrics-check (Prometheus's text parser)"
# proc-guard and go-fields have no Go tests of their own: the e2e tests run proc-guard (stop-on-signal,
# team-operations' kill -9), test/unit/schemas.test.ts runs go-fields.
for m in "tools/fleet-render work" "tools/fleet-sops off" "tools/fleet-schedule off" "tools/metrics-check off"; do
  read -r dir work <<<"$m"
  in_module "$dir" "$work" go test -mod=readonly -count=1 ./...
done

echo "-- go test: the provider, its decisions and its apply, prune and wait on a local cluster"
live_tests
