# Shell helpers shared by the tool build scripts (sourced, not run).

log() { printf '%s\n' "$*" >&2; }
# Toolchain details (what was reused, and where) only on request: `--verbose` on the operations
# (scripts/setup.sh exports it) or PULUMI_FLEET_VERBOSE=1. What is being built is always logged.
verbose() { [[ ${PULUMI_FLEET_VERBOSE:-} == 1 ]]; }
vlog() { if verbose; then log "$@"; fi; }
die() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

# Entries of a go.mod directive ("require" or "tool"), one "path [version]" per line,
# for both the single-line and the block form.
mod_entries() {
  awk -v d="$1" '
    $1 == d && $2 == "(" { inblock = 1; next }
    inblock && $1 == ")" { inblock = 0; next }
    inblock && $1 !~ /^\/\// && NF { print $1, $2; next }
    !inblock && $1 == d && $2 != "(" { print $2, $3 }
  ' "$2"
}
# (No early exit in the consumer: with pipefail, the producer's SIGPIPE would fail the script at random.)
mod_version() { mod_entries require "$2" | awk -v m="$1" '$1 == m && !found { print $2; found = 1 }'; }
# "// key: value" lines in the go.mod header comment.
mod_meta() { sed -n "s|^//[[:space:]]*$1:[[:space:]]*\([0-9][^[:space:]]*\).*|\1|p" "$2" | awk 'NR == 1'; }
# Hash of a string plus the contents (not the paths) of files: the stamp value.
hash_of() { { go version; printf '%s\n' "$1"; cat "${@:2}"; } | sha256sum | cut -c1-16; }

# Go settings every tool build uses: the installed toolchain only, no workspace (but go_workspace_env),
# static binaries.
go_build_env() {
  command -v go >/dev/null || die "go not found on PATH"
  export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0
}

# fleet-render and fleet-provider build in one module graph (tools/workspace/go.work, written by
# scripts/go-workspace.js), so the packages both import compile once into the shared Go build cache.
go_workspace_env() { export GOWORK=$tools_dir/workspace/go.work; }
# What decides a workspace build besides the tool's own files, for its stamp (paths relative to a tool's
# directory): the workspace and both modules' requirements (either can move the other's versions).
workspace_files=(../workspace/go.work ../workspace/go.work.sum ../fleet-render/go.mod ../fleet-render/go.sum ../fleet-provider/go.mod ../fleet-provider/go.sum)

# go_schema: write fleet-provider's and fleet-render's zz_generated_schema*.go from the one schema of the
# TypeScript <-> Go boundary (core/model/schema, scripts/go-schema.ts), unless each already carries the hash
# of those sources (the generator stamps the same). Not committed; written before every build or test of them.
go_schema() {
  local root want f node=node
  root=$(cd "$tools_dir/.." && pwd)
  # The project's Node (22, from node_modules), not whichever is first on PATH: run-ts.js refuses older ones.
  [[ -x $root/node_modules/.bin/node ]] && node=$root/node_modules/.bin/node
  want=$(cd "$root" && LC_ALL=C ls core/model/schema/*.ts scripts/go-schema.ts | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)
  for f in fleet-provider fleet-render; do
    if ! grep -qs "^// schema sources $want\$" "$tools_dir/$f/zz_generated_schema.go" || [[ ! -f $tools_dir/$f/zz_generated_schema_test.go ]]; then
      vlog "go_schema: writing tools/*/zz_generated_schema.go from core/model/schema"
      "$node" "$root/scripts/run-ts.js" "$root/scripts/go-schema.ts" || die "scripts/go-schema.ts failed: the Go side of the schema could not be written"
      return
    fi
  done
}

# go_quiet <go arguments...>: go without its "go: downloading" lines (a cold module cache prints hundreds);
# --verbose keeps them. Errors pass through.
go_quiet() {
  if verbose; then go "$@"; return; fi
  local rc errexit=0
  [[ $- == *e* ]] && errexit=1
  set +e # go's status is read from the pipeline, which ends only once the filter has written everything
  { go "$@" 2>&1 1>&3 3>&- | grep --line-buffered -v '^go: downloading ' >&2 3>&-; rc=${PIPESTATUS[0]}; } 3>&1
  ((errexit)) && set -e
  return "$rc"
}

# Serialise builds of one directory (parallel test workers, several shells): lock fd 9 on <dir>/.lock.
lock_dir() {
  mkdir -p "$1"
  if command -v flock >/dev/null; then
    exec 9>"$1/.lock"
    flock 9
  fi
}

# pinned_module_dir <module@version> <h1 sum>: download a module from the Go module proxy into the
# module cache, refuse it unless its zip hash is the pinned one, and print its directory there.
# (A caller whose module the checksum database lacks sets GONOSUMDB for that module on the call.)
pinned_module_dir() {
  local scratch json got
  scratch=$(mktemp -d)
  json=$(cd "$scratch" && GOFLAGS=-mod=mod go mod download -json "$1") || { rm -rf "$scratch"; die "could not download $1 from the Go module proxy"; }
  rm -rf "$scratch"
  got=$(printf '%s' "$json" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",*$/\1/p')
  [[ $got == "$2" ]] || die "$1 has hash $got, pinned $2: refusing it"
  printf '%s' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p'
}

# A build says one line: what it builds and how long the last build of it took (a fresh build directory
# is made per source hash, so the duration is kept beside them, in <cache>/tools/.durations/<name>).
# build_begin <name> <durations dir>; build_end <name> <durations dir> (records the duration).
build_begin() {
  local last=$2/$1 said="first build here: minutes"
  [[ -r $last ]] && said="last build $(<"$last")"
  log "building $1 ($said; cached after)"
  build_started=$(now)
}
build_end() {
  mkdir -p "$2"
  awk -v a="$build_started" -v b="$(now)" 'BEGIN { s = int(b - a + 0.5); if (s >= 60) printf "%d min %d s\n", s / 60, s % 60; else printf "%d s\n", s }' >"$2/$1"
  vlog "$1: built in $(<"$2/$1")"
}

# build_once <binary> <module dir> <label> [--package <pkg>] <go build flags...>: build the module's main
# package (or <pkg>, relative to the module) into <binary> unless it is there (or PULUMI_FLEET_REBUILD=1);
# it appears only complete (built beside, then renamed), so an interrupted build is never used. Callers
# hold the build directory's lock (lock_dir).
build_once() {
  local bin=$1 src=$2 label=$3 pkg=.
  shift 3
  if [[ ${1:-} == --package ]]; then pkg=$2; shift 2; fi
  if [[ ${PULUMI_FLEET_REBUILD:-} != 1 && -x $bin ]]; then vlog "$label: reusing $bin"; return 0; fi
  local durations
  durations=$(dirname "$(dirname "$bin")")/.durations
  build_begin "$(basename "$bin")" "$durations"
  vlog "$label: building into $(dirname "$bin")"
  (cd "$src" && go_quiet build "$@" -o "$bin.tmp" "$pkg") || die "go build of $label ($src) failed"
  mv -f "$bin.tmp" "$bin"
  build_end "$(basename "$bin")" "$durations"
}

# path_flag_args <script> <args...>: the small tools' command line: --path (sets want_path=1) and
# --help (prints the script's header comment); anything else is an error.
path_flag_args() {
  want_path=0
  local arg
  for arg in "${@:2}"; do
    case "$arg" in
      --path) want_path=1 ;;
      -h|--help) sed -n '2,/^set -euo/p' "$1" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
      *) echo "$(basename "$1"): unknown argument: $arg (try --help)" >&2; exit 2 ;;
    esac
  done
}

# build_module_tool <name> <label>: build tools/<name> (the main package of its own go.mod) into the
# cache directory named after a hash of its go.mod, go.sum, non-test .go files and the Go version, or
# reuse it; prints the binary's path when want_path is 1. Needs tools_dir and cache_root.
build_module_tool() {
  local name=$1 label=$2 src=$tools_dir/$1 hash build_dir bin
  local -a sources
  go_build_env
  mapfile -t sources < <(cd "$src" && ls go.mod go.sum ./*.go | grep -v '_test\.go$' | LC_ALL=C sort)
  hash=$(cd "$src" && hash_of "-trimpath -s -w" "${sources[@]}")
  build_dir=$cache_root/tools/$name-$hash
  bin=$build_dir/$name
  lock_dir "$build_dir"
  build_once "$bin" "$src" "$label" -mod=readonly -trimpath -ldflags "-s -w"
  if ((want_path)); then printf '%s\n' "$bin"; fi
}
