#!/usr/bin/env bash
# Build fleet-schedule (tools/fleet-schedule: where a time stands in a stack's maintenance windows, with
# the cron library Fleet's Schedule controller uses, github.com/reugn/go-quartz, pinned in its go.mod)
# into a per-user cache outside the repository, or reuse a finished build. Built on first use, by the
# first operation of a stack with `schedules`. The cache directory is named after a hash of go.mod,
# go.sum, the .go files and the Go version.
#
# Usage:
#   tools/build-schedule.sh [--path]   build or reuse; progress on stderr; --path then prints the binary's path
#
# Environment: PULUMI_FLEET_CACHE (cache root, default ${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet),
# PULUMI_FLEET_REBUILD=1, and GOPROXY, GOMODCACHE, GOCACHE, GOFLAGS as usual. go-quartz has no
# dependencies and is in the public checksum database.
set -euo pipefail

want_path=0
for arg in "$@"; do
  case "$arg" in
    --path) want_path=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-schedule.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$tools_dir/fleet-schedule
cache_root=${PULUMI_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet}
# shellcheck source=tools/lib.sh
source "$tools_dir/lib.sh"
go_build_env

mapfile -t sources < <(cd "$src" && ls go.mod go.sum ./*.go | grep -v '_test\.go$' | LC_ALL=C sort)
hash=$(cd "$src" && hash_of "-trimpath -s -w" "${sources[@]}")
build_dir=$cache_root/tools/fleet-schedule-$hash
bin=$build_dir/fleet-schedule
lock_dir "$build_dir"
build_once "$bin" "$src" "build-schedule: fleet-schedule (tools/fleet-schedule, go-quartz from its go.mod)" -mod=readonly -trimpath -ldflags "-s -w"
if ((want_path)); then printf '%s\n' "$bin"; fi
