#!/usr/bin/env bash
# Build pulumi-resource-pulumi-fleet (tools/fleet-provider: the provider of the BundleDeployment
# resource, one per bundle and cluster, applying with fluxcd/pkg/ssa; modules pinned in its go.mod)
# into a per-user cache outside the repository, or reuse a finished build. The cache directory is named
# after a hash of the sources, go.mod, go.sum, tools/workspace/go.work (the module graph it shares
# with fleet-render) and fleet-render's requirements and the Go version, so an edit builds anew and an
# interrupted build is never used. tools/build-pulumi.sh installs it in the engine's PULUMI_HOME.
#
# The plugin's version is 0.1.0-h<that hash>: tools/build-pulumi.sh installs it under that version, and
# the program asks the engine for exactly it, so builds of different sources (another checkout, the
# upgrade test's earlier version, CI beside a working copy) sit side by side in one PULUMI_HOME.
#
# Usage:
#   tools/build-provider.sh [--path]   build or reuse; progress on stderr; --path then prints the binary's path
#   tools/build-provider.sh --version  the same, then prints the plugin's version
#
# Environment: PULUMI_FLEET_CACHE (cache root, default ${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet),
# PULUMI_FLEET_REBUILD=1, and GOPROXY, GOMODCACHE, GOCACHE, GOFLAGS as usual. No GONOSUMDB is needed:
# every module it uses is in the public checksum database.
set -euo pipefail

want_path=0
want_version=0
for arg in "$@"; do
  case "$arg" in
    --path) want_path=1 ;;
    --version) want_version=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-provider.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$tools_dir/fleet-provider
cache_root=${PULUMI_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet}
# shellcheck source=tools/lib.sh
source "$tools_dir/lib.sh"
go_build_env
go_workspace_env
# The Go side of the boundary's schema (core/model/schema): generated, part of the sources hashed below.
go_schema

mapfile -t sources < <(cd "$src" && ls go.mod go.sum "${workspace_files[@]}" *.go | grep -v '_test\.go$' | LC_ALL=C sort)
hash=$(cd "$src" && hash_of "-trimpath" "${sources[@]}")
build_dir=$cache_root/tools/fleet-provider-$hash
bin=$build_dir/pulumi-resource-pulumi-fleet
lock_dir "$build_dir"

version=0.1.0-h$hash
build_once "$bin" "$src" "build-provider: pulumi-resource-pulumi-fleet (tools/fleet-provider: ssa, kstatus, Pulumi's Go SDK)" -mod=readonly -trimpath -ldflags "-s -w -X main.version=$version"
if ((want_path)); then printf '%s\n' "$bin"; fi
if ((want_version)); then printf '%s\n' "$version"; fi
