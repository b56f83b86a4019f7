#!/usr/bin/env bash
# Build fleet-render (tools/fleet-render: Fleet's templating and rendering with Fleet's own Go
# libraries, pinned in its go.mod) into a per-user cache outside the repository, or reuse a finished
# build. The cache directory is named after a hash of the sources, go.mod, go.sum, tools/workspace/go.work (the
# module graph it shares with fleet-provider) and fleet-provider's requirements and the Go version,
# so an edit or a version bump builds anew and an interrupted build is never used.
#
# Usage:
#   tools/build-render.sh [--path] [chart-repo]
#     build or reuse fleet-render (or, with chart-repo, the test-only chart repository and OCI registry
#     server in tools/fleet-render/chart-repo, same module); progress on stderr; --path then prints the
#     binary's path on stdout
#
# Environment: PULUMI_FLEET_CACHE (cache root, default ${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet),
# PULUMI_FLEET_REBUILD=1, and GOPROXY, GOMODCACHE, GOCACHE, GOFLAGS as usual. No GONOSUMDB is needed:
# every module it uses is in the public checksum database.
set -euo pipefail

want_path=0
tool=fleet-render
for arg in "$@"; do
  case "$arg" in
    --path) want_path=1 ;;
    chart-repo) tool=chart-repo ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-render.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$tools_dir/fleet-render
cache_root=${PULUMI_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet}
# shellcheck source=tools/lib.sh
source "$tools_dir/lib.sh"
go_build_env
go_workspace_env
# The Go side of the boundary's schema (core/model/schema): generated, part of the sources hashed below.
go_schema

pkg=.
[[ $tool == chart-repo ]] && pkg=./chart-repo
mapfile -t sources < <(cd "$src" && ls go.mod go.sum "${workspace_files[@]}" "$pkg"/*.go | LC_ALL=C sort)
hash=$(cd "$src" && hash_of "-trimpath" "${sources[@]}")
build_dir=$cache_root/tools/$tool-$hash
bin=$build_dir/$tool
lock_dir "$build_dir"

build_once "$bin" "$src" "build-render" --package "$pkg" -mod=readonly -trimpath
if ((want_path)); then printf '%s\n' "$bin"; fi
