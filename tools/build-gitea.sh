#!/usr/bin/env bash
# Build Gitea (code.gitea.io/gitea, a real git host with GitHub-like commit-status and comment APIs) from
# the Go module proxy into a per-user cache outside the repository, or reuse a finished build. A test tool
# only: test/git-hosts/ posts the deploy result on the commit to it and reads it back. Not part of
# `npm test` (its build takes minutes on two cores: BENCHMARKS.md); run it by hand, or in a job of its own.
#
# The version is pinned with its module hash. The newest release (v1.27.3) needs modules the proxy does
# not serve (gitea.dev/actions-proto-go, gitea.dev/sdk: 403), so v1.26.0. SQLite needs cgo (gcc).
#
# Usage:
#   tools/build-gitea.sh [--path]   build or reuse; progress on stderr; --path then prints the binary's path
#
# Environment: PULUMI_FLEET_CACHE (cache root, default ${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet),
# PULUMI_FLEET_REBUILD=1, and GOPROXY, GOMODCACHE, GOCACHE, GOFLAGS as usual.
set -euo pipefail

GITEA_VERSION=v1.26.0
GITEA_SUM=h1:fJP9dqLbzKrKWUVnCVTfVersZdVDuyJQLEDzCAOmKKA=

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${PULUMI_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet}
# shellcheck source=tools/lib.sh
source "$tools_dir/lib.sh"
path_flag_args "$0" "$@"
go_build_env
command -v gcc >/dev/null || die "gcc not found on PATH: Gitea's SQLite driver needs cgo"
export CGO_ENABLED=1
tags="sqlite sqlite_unlock_notify"
build_dir=$cache_root/tools/gitea-$(hash_of "$GITEA_VERSION $GITEA_SUM $tags")
bin=$build_dir/gitea
lock_dir "$build_dir"
if [[ ${PULUMI_FLEET_REBUILD:-} == 1 || ! -x $bin ]]; then
  module=$(pinned_module_dir "code.gitea.io/gitea@$GITEA_VERSION" "$GITEA_SUM")
  # The module cache is read-only; the build runs in a copy (Gitea's go.mod has replace directives, so
  # `go install module@version` refuses it: it builds as the main module).
  rm -rf "$build_dir/src"
  cp -r "$module" "$build_dir/src"
  chmod -R u+w "$build_dir/src"
  build_once "$bin" "$build_dir/src" "gitea $GITEA_VERSION" -mod=readonly -tags "$tags" -ldflags "-X main.Version=${GITEA_VERSION#v}"
  rm -rf "$build_dir/src"
fi
# Without the bindata tag (its assets need Gitea's frontend build) Gitea reads its locales and templates
# from STATIC_ROOT_PATH: they are kept beside the binary (test/support/gitea.ts points there).
if [[ ! -d $build_dir/options || ! -d $build_dir/templates ]]; then
  module=$(pinned_module_dir "code.gitea.io/gitea@$GITEA_VERSION" "$GITEA_SUM")
  rm -rf "$build_dir/options" "$build_dir/templates"
  cp -r "$module/options" "$module/templates" "$build_dir/"
  chmod -R u+w "$build_dir/options" "$build_dir/templates"
fi
if ((want_path)); then printf '%s\n' "$bin"; fi
