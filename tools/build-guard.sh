#!/usr/bin/env bash
# Build proc-guard (tools/proc-guard: the supervisor every engine CLI of an operation runs under, so
# that no process it starts outlives the operation; see its main.go) into a per-user cache outside the
# repository, or reuse a finished build. The cache directory is named after a hash of go.mod, go.sum and
# the .go files (the same hash automation/engine/process-guard.ts computes to find it without running this
# script), so an edit builds anew and an interrupted build is never used. Linux only.
#
# Usage:
#   tools/build-guard.sh [--path]   build or reuse; progress on stderr; --path then prints the binary's path
#
# Environment: PULUMI_FLEET_CACHE (cache root, default ${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet),
# PULUMI_FLEET_REBUILD=1, and GOPROXY, GOMODCACHE, GOCACHE, GOFLAGS as usual. Its one dependency,
# golang.org/x/sys, is pinned in tools/proc-guard/go.mod (checksums in go.sum and in the public database).
set -euo pipefail

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$tools_dir/proc-guard
cache_root=${PULUMI_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet}
# shellcheck source=tools/lib.sh
source "$tools_dir/lib.sh"
path_flag_args "$0" "$@"

# The hash: sha256 of the files' contents, in byte order of their names (go.mod, go.sum, *.go).
mapfile -t sources < <(cd "$src" && printf '%s\n' go.mod go.sum *.go | LC_ALL=C sort)
hash=$(cd "$src" && cat "${sources[@]}" | sha256sum | cut -c1-16)
build_dir=$cache_root/tools/proc-guard-$hash
bin=$build_dir/proc-guard

if [[ ${PULUMI_FLEET_REBUILD:-} == 1 || ! -x $bin ]]; then
  go_build_env
  lock_dir "$build_dir"
  build_once "$bin" "$src" "build-guard: proc-guard (tools/proc-guard)" -mod=readonly -trimpath -ldflags "-s -w"
else
  vlog "build-guard: reusing $bin"
fi
if ((want_path)); then printf '%s\n' "$bin"; fi
