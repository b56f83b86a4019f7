#!/usr/bin/env bash
# Build metrics-check (tools/metrics-check: Prometheus's own text-format parser, github.com/prometheus/common
# expfmt, pinned in its go.mod) into a per-user cache outside the repository, or reuse a finished build.
# A test tool: the tests read pulumi-fleet's metrics (textfile and Pushgateway body) through it. The
# cache directory is named after a hash of go.mod, go.sum, the .go files and the Go version, so an edit
# or a version bump builds anew and an interrupted build is never used.
#
# Usage:
#   tools/build-metrics-check.sh [--path]   build or reuse; progress on stderr; --path then prints the binary's path
#
# Environment: PULUMI_FLEET_CACHE (cache root, default ${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet),
# PULUMI_FLEET_REBUILD=1, and GOPROXY, GOMODCACHE, GOCACHE, GOFLAGS as usual. Every module it needs is
# in the public checksum database.
set -euo pipefail

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${PULUMI_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet}
# shellcheck source=tools/lib.sh
source "$tools_dir/lib.sh"
path_flag_args "$0" "$@"
build_module_tool metrics-check "build-metrics-check: metrics-check (tools/metrics-check, Prometheus's text parser from its go.mod)"
