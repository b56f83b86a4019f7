#!/usr/bin/env bash
# Build fleet-sops (tools/fleet-sops: decrypts a GitRepo's SOPS-encrypted manifests with the age key the
# stack gives that GitRepo, with SOPS's own Go libraries pinned in its go.mod) into a per-user cache
# outside the repository, or reuse a finished build. Built on first use, by the first operation that
# meets an encrypted file. The cache directory is named after a hash of go.mod, go.sum, the .go files
# and the Go version, so an edit or a version bump builds anew and an interrupted build is never used.
#
# Usage:
#   tools/build-sops.sh [--path]   build or reuse; progress on stderr; --path then prints the binary's path
#
# Environment: PULUMI_FLEET_CACHE (cache root, default ${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet),
# PULUMI_FLEET_REBUILD=1, and GOPROXY, GOMODCACHE, GOCACHE, GOFLAGS as usual. No GONOSUMDB is needed:
# github.com/getsops/sops/v3, filippo.io/age and every module they need are in the public checksum database.
set -euo pipefail

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${PULUMI_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet}
# shellcheck source=tools/lib.sh
source "$tools_dir/lib.sh"
path_flag_args "$0" "$@"
build_module_tool fleet-sops "build-sops: fleet-sops (tools/fleet-sops, SOPS and age from its go.mod)"
