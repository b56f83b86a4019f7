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

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${PULUMI_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet}
# shellcheck source=tools/lib.sh
source "$tools_dir/lib.sh"
path_flag_args "$0" "$@"
build_module_tool fleet-schedule "build-schedule: fleet-schedule (tools/fleet-schedule, go-quartz from its go.mod)"
