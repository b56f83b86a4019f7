#!/usr/bin/env bash
# Build the Pulumi engine (CLI and the Node.js language host) and
# the Kubernetes resource provider from the Go modules pinned in
# tools/pulumi/go.mod and tools/kubernetes/go.mod, into a per-user cache outside
# the repository, with an isolated PULUMI_HOME that holds the provider plugin.
# Needs only Go (the toolchain named by the go.mod "go" lines or newer), the Go
# module proxy (or a warm module cache) and node (to write the provider's
# embedded schema). Nothing is written inside the repository.
#
# Usage:
#   tools/build-pulumi.sh          build, or reuse a finished build; progress on stderr
#   tools/build-pulumi.sh --env    the same, then print shell exports on stdout:
#                                    eval "$(tools/build-pulumi.sh --env)"
#   --k8s-provider                 also build the Kubernetes provider (only a stack of an earlier version,
#                                  whose state holds its per-object resources, needs it: the engine asks
#                                  for it then, automation/engine/toolchain.ts ensureKubernetesProvider)
#   --verbose (or PULUMI_FLEET_VERBOSE=1): also report what was reused, and where, when nothing was
#                                  built (a build always reports)
#
# Environment:
#   PULUMI_FLEET_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet);
#                        builds go to $PULUMI_FLEET_CACHE/tools/pulumi-<ver>-k8s-<ver>/
#   A `pulumi` on PATH of the pinned major and at least the pinned version, with the
#   Node.js language host installed next to it, is used instead of building the CLI
#   (tools/pulumi-choice.sh; the choice is printed). PULUMI_FLEET_USE_SYSTEM_PULUMI=0
#   never uses it; =1 uses it whatever its version. Providers are installed in the
#   isolated PULUMI_HOME either way.
#   PULUMI_FLEET_REBUILD=1   rebuild even if a finished build is present.
#   GOPROXY, GOMODCACHE, GOCACHE, GOFLAGS are honoured; GOTOOLCHAIN is forced to
#   "local", so a go.mod "go" line newer than the installed Go fails at once
#   instead of downloading a toolchain.
#
# Layout of the build directory:
#   bin/pulumi                  the CLI (PulumiCommand.get({ root: <build dir> }))
#   bin/pulumi-language-nodejs  the Node.js language host, from tools/language-nodejs/go.mod
#   provider/pulumi-resource-kubernetes   (kept off bin/ so it is never "ambient")
#   home/                       PULUMI_HOME;
#   home/plugins/resource-kubernetes-v<plugin-version>/pulumi-resource-kubernetes
#   src/kubernetes/             provider build directory (go.mod, go.sum, main.go
#                               copied from tools/kubernetes + generated embeds)
#   .cli.stamp, .provider.stamp written last, only after a successful build; they
#                               hold a hash of the inputs, so an interrupted or
#                               outdated build is redone.
set -euo pipefail

want_env=0
want_k8s=0
for arg in "$@"; do
  case "$arg" in
    --env) want_env=1 ;;
    --k8s-provider) want_k8s=1 ;;
    --verbose) export PULUMI_FLEET_VERBOSE=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-pulumi.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cli_mod=$tools_dir/pulumi
lh_mod=$tools_dir/language-nodejs
k8s_mod=$tools_dir/kubernetes
cache_root=${PULUMI_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet}

# shellcheck source=tools/lib.sh
source "$tools_dir/lib.sh"
go_build_env

# ---- pinned versions (all read from the go.mod files) ----
pkg_module=github.com/pulumi/pulumi/pkg/v3
k8s_module=github.com/pulumi/pulumi-kubernetes/provider/v4
cli_version=$(mod_version "$pkg_module" "$cli_mod/go.mod")
[[ -n $cli_version ]] || die "$cli_mod/go.mod does not require $pkg_module"
mapfile -t cli_tools < <(mod_entries tool "$cli_mod/go.mod" | awk '{ print $1 }')
((${#cli_tools[@]})) || die "$cli_mod/go.mod has no tool directive"
k8s_pseudo=$(mod_version "$k8s_module" "$k8s_mod/go.mod")
k8s_release=$(mod_meta provider-release "$k8s_mod/go.mod")
k8s_plugin_version=$(mod_meta plugin-version "$k8s_mod/go.mod")
k8s_reported=$(mod_meta reported-version "$k8s_mod/go.mod")
k8s_reported=${k8s_reported:-$k8s_release}
[[ -n $k8s_pseudo ]] || die "$k8s_mod/go.mod does not require $k8s_module"
[[ -n $k8s_release && -n $k8s_plugin_version ]] ||
  die "$k8s_mod/go.mod lacks the '// provider-release: X.Y.Z' or '// plugin-version: X.Y.Z' comment line"

build_dir=$cache_root/tools/pulumi-$cli_version-k8s-v$k8s_release
bin_dir=$build_dir/bin
pulumi_home=$build_dir/home
plugin_dir=$pulumi_home/plugins/resource-kubernetes-v$k8s_plugin_version
lock_dir "$build_dir"

t_start=$(now)
gomod_flags=(-mod=readonly -trimpath)

# ---- Pulumi CLI (+ language host) ----
cli_ldflags="-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$cli_version"
cli_tags=osusergo,grpcnotrace
cli_stamp=$build_dir/.cli.stamp
cli_hash=$(hash_of "$cli_ldflags $cli_tags ${cli_tools[*]}" "$cli_mod/go.mod" "$cli_mod/go.sum")
# A compatible CLI on PATH is used as it is (tools/pulumi-choice.sh); this project's own build, on PATH
# once its --env was applied, is not "another" CLI.
# shellcheck source=tools/pulumi-choice.sh
source "$tools_dir/pulumi-choice.sh"
sys_pulumi=$(command -v pulumi 2>/dev/null || true)
[[ -n $sys_pulumi ]] && sys_pulumi=$(readlink -f "$sys_pulumi")
[[ $sys_pulumi == "$cache_root"/* ]] && sys_pulumi=""
sys_version="" sys_langhost=0
if [[ -n $sys_pulumi && ${PULUMI_FLEET_USE_SYSTEM_PULUMI:-} != 0 ]]; then
  sys_version=$(timeout 20 "$sys_pulumi" version 2>/dev/null | head -n 1 || true)
  [[ -x $(dirname "$sys_pulumi")/pulumi-language-nodejs ]] && sys_langhost=1
fi
choice=$(pulumi_choice "${PULUMI_FLEET_USE_SYSTEM_PULUMI:-}" "$sys_pulumi" "$sys_version" "$sys_langhost" "$cli_version")
# Said once per run: scripts/setup.sh passes the result on (PULUMI_FLEET_TOOLCHAIN_ENV), so this runs once.
if [[ $choice == use* ]]; then
  log "using pulumi ${choice#use }"
elif [[ -n $sys_pulumi ]]; then
  log "not using the pulumi on PATH: ${choice#build }; using this project's build"
fi
if [[ $choice == use* ]]; then
  # The Automation API and proc-guard run <root>/bin/pulumi: a root of links to the CLI on PATH and its
  # language host, wherever they are installed (a directory not named bin, say), one per CLI path.
  bin_dir=$cache_root/tools/system-pulumi-$(printf '%s' "$sys_pulumi" | sha256sum | cut -c1-12)/bin
  mkdir -p "$bin_dir"
  ln -sfn "$sys_pulumi" "$bin_dir/pulumi"
  ln -sfn "$(dirname "$sys_pulumi")/pulumi-language-nodejs" "$bin_dir/pulumi-language-nodejs"
  cli_version=${sys_version:-?}
  cli_status="system CLI: ${choice#use }"
elif [[ ${PULUMI_FLEET_REBUILD:-} != 1 && -f $cli_stamp && $(<"$cli_stamp") == "$cli_hash" && -x $bin_dir/pulumi ]]; then
  cli_status="reused"
else
  rm -f "$cli_stamp"
  mkdir -p "$bin_dir"
  build_begin pulumi "$cache_root/tools/.durations"
  t=$(now)
  # Fetch just the modules the build needs (verified against go.sum), timed apart.
  (cd "$cli_mod" && go_quiet list -mod=readonly -deps -tags "$cli_tags" "${cli_tools[@]}" >/dev/null)
  t_dl=$(since "$t")
  t=$(now)
  (cd "$cli_mod" && go_quiet build "${gomod_flags[@]}" -tags "$cli_tags" -ldflags "$cli_ldflags" -o "$bin_dir/" "${cli_tools[@]}")
  printf '%s\n' "$cli_hash" >"$cli_stamp"
  cli_status="built: modules $t_dl, compile $(since "$t")"
  build_end pulumi "$cache_root/tools/.durations"
fi
# ---- Node.js language host (its own module: see tools/language-nodejs/go.mod) ----
lh_module=github.com/pulumi/pulumi/sdk/v3
lh_version=$(mod_version "$lh_module" "$lh_mod/go.mod")
mapfile -t lh_tools < <(mod_entries tool "$lh_mod/go.mod" | awk '{ print $1 }')
[[ -n $lh_version && ${#lh_tools[@]} -gt 0 ]] || die "$lh_mod/go.mod must require $lh_module and name the host as a tool"
lh_ldflags="-s -w -X $lh_module/go/common/version.Version=$lh_version"
lh_stamp=$build_dir/.language-host.stamp
lh_hash=$(hash_of "$lh_ldflags $cli_tags ${lh_tools[*]}" "$lh_mod/go.mod" "$lh_mod/go.sum")
if [[ $choice == use* ]]; then
  lh_status="system install"
elif [[ ${PULUMI_FLEET_REBUILD:-} != 1 && -f $lh_stamp && $(<"$lh_stamp") == "$lh_hash" && -x $bin_dir/pulumi-language-nodejs ]]; then
  lh_status="reused"
else
  rm -f "$lh_stamp"
  build_begin pulumi-language-nodejs "$cache_root/tools/.durations"
  t=$(now)
  (cd "$lh_mod" && go_quiet build "${gomod_flags[@]}" -tags "$cli_tags" -ldflags "$lh_ldflags" -o "$bin_dir/" "${lh_tools[@]}")
  printf '%s\n' "$lh_hash" >"$lh_stamp"
  lh_status="built in $(since "$t")"
  build_end pulumi-language-nodejs "$cache_root/tools/.durations"
fi
langhost="$bin_dir/pulumi-language-nodejs  $lh_version  [$lh_status]"

# ---- Kubernetes provider ----
k8s_ldflags="-s -w -X $k8s_module/pkg/version.Version=$k8s_reported"
k8s_stamp=$build_dir/.provider.stamp
k8s_hash=$(hash_of "$k8s_ldflags $k8s_plugin_version" "$k8s_mod/go.mod" "$k8s_mod/go.sum" "$k8s_mod/main.go")
k8s_bin=$build_dir/provider/pulumi-resource-kubernetes
if [[ ${PULUMI_FLEET_REBUILD:-} != 1 && -f $k8s_stamp && $(<"$k8s_stamp") == "$k8s_hash" && -x $k8s_bin && -x $plugin_dir/pulumi-resource-kubernetes ]]; then
  k8s_status="reused"
elif ((!want_k8s)); then
  # Built on demand only: a new stack never loads it (12 minutes of a cold start otherwise).
  k8s_status="not built: no stack asked for it"
else
  rm -f "$k8s_stamp"
  command -v node >/dev/null || die "node not found on PATH (needed to write the provider's embedded schema)"
  build_begin pulumi-resource-kubernetes "$cache_root/tools/.durations"
  t=$(now)
  src=$build_dir/src/kubernetes
  rm -rf "$src"
  mkdir -p "$src" "$(dirname "$k8s_bin")"
  cp "$k8s_mod/go.mod" "$k8s_mod/go.sum" "$k8s_mod/main.go" "$src/"
  # Upstream generates these two go:embed files (cmd/pulumi-resource-kubernetes/generate.go)
  # and does not commit them, so they are missing from the module zip.
  (cd "$src" && go_quiet mod download "$k8s_module")
  upstream_cmd=$(cd "$src" && go_quiet list -mod=readonly -m -f '{{.Dir}}' "$k8s_module")/cmd/pulumi-resource-kubernetes
  node -e '
    const fs = require("fs");
    const [schemaIn, tfIn, dir, version] = process.argv.slice(1);
    const schema = JSON.parse(fs.readFileSync(schemaIn, "utf8"));
    schema.version = version;
    fs.writeFileSync(dir + "/schema-embed.json", JSON.stringify(schema));
    fs.writeFileSync(dir + "/terraform-mapping-embed.json", JSON.stringify(JSON.parse(fs.readFileSync(tfIn, "utf8"))));
  ' "$upstream_cmd/schema.json" "$upstream_cmd/terraform-mapping.json" "$src" "$k8s_reported"
  (cd "$src" && go_quiet list -mod=readonly -deps . >/dev/null)
  t_dl=$(since "$t")
  t=$(now)
  (cd "$src" && go_quiet build "${gomod_flags[@]}" -ldflags "$k8s_ldflags" -o "$k8s_bin" .)
  # Install under the exact directory name the engine looks up.
  mkdir -p "$plugin_dir"
  ln -f "$k8s_bin" "$plugin_dir/.pulumi-resource-kubernetes.tmp" 2>/dev/null ||
    cp "$k8s_bin" "$plugin_dir/.pulumi-resource-kubernetes.tmp"
  mv -f "$plugin_dir/.pulumi-resource-kubernetes.tmp" "$plugin_dir/pulumi-resource-kubernetes"
  printf '%s\n' "$k8s_hash" >"$k8s_stamp"
  k8s_status="built: modules+embeds $t_dl, compile $(since "$t")"
  build_end pulumi-resource-kubernetes "$cache_root/tools/.durations"
fi

# ---- pulumi-fleet's own provider (the BundleDeployment resource; tools/build-provider.sh) ----
# Installed under its own version (0.1.0-h<source hash>), which the program asks for
# (PULUMI_FLEET_PROVIDER_VERSION): another build of it in the same PULUMI_HOME is another plugin, never
# a replacement of this one. Builds not installed or used for a week are removed, the newest three kept.
fleet_bin=$(bash "$tools_dir/build-provider.sh" --path)
fleet_version=0.1.0-h$(basename "$(dirname "$fleet_bin")" | sed 's/^fleet-provider-//')
fleet_plugin_dir=$pulumi_home/plugins/resource-pulumi-fleet-v$fleet_version
fleet_status="reused"
if ! cmp -s "$fleet_bin" "$fleet_plugin_dir/pulumi-resource-pulumi-fleet"; then
  fleet_status="installed"
  mkdir -p "$fleet_plugin_dir"
  cp "$fleet_bin" "$fleet_plugin_dir/.pulumi-resource-pulumi-fleet.tmp"
  mv -f "$fleet_plugin_dir/.pulumi-resource-pulumi-fleet.tmp" "$fleet_plugin_dir/pulumi-resource-pulumi-fleet"
fi
touch "$fleet_plugin_dir"
find "$pulumi_home/plugins" -maxdepth 1 -name 'resource-pulumi-fleet-v0.1.0-h*' -mtime +7 -printf '%T@ %p\n' | sort -rn | tail -n +4 |
  cut -d' ' -f2- | xargs -r rm -rf

# ---- the engine's automatic log, off unless PULUMI_FLEET_ENGINE_LOGS=1 ----
# Pulumi v3.259.0 writes every verbose record of every command (property values included, gzip-compressed,
# encrypted once the stack's secrets manager is known) to $PULUMI_HOME/logs, and no setting turns that
# off: it was the largest part of the engine's own CPU in a preview (BENCHMARKS.md §13). A regular file in place of that
# directory makes the CLI's start-up log "automatic logging unavailable" and go on without it. For the
# engine's own logs use its flags instead: `npm run pulumi -- preview -v=9 --logtostderr`.
engine_logs=$pulumi_home/logs
if [[ ${PULUMI_FLEET_ENGINE_LOGS:-} == 1 ]]; then
  [[ -f $engine_logs ]] && rm -f "$engine_logs"
elif [[ ! -f $engine_logs ]]; then
  rm -rf "$engine_logs"
  printf 'pulumi-fleet: the engine'"'"'s automatic log is off here (tools/build-pulumi.sh); PULUMI_FLEET_ENGINE_LOGS=1 turns it on\n' >"$engine_logs"
fi

# The summary only when something was built or installed, or on request (--verbose): a warm start says nothing.
# The details of a build on request (--verbose): each build already said its one line (build_begin).
if verbose; then
  log "pulumi-fleet engine ($(go env GOVERSION), total $(since "$t_start"))
  build dir     $build_dir
  pulumi CLI    $bin_dir/pulumi  $cli_version  [$cli_status]
  language host $langhost
  k8s provider  $plugin_dir/pulumi-resource-kubernetes
                release $k8s_release ($k8s_module@$k8s_pseudo), reports $k8s_reported,
                installed as plugin version $k8s_plugin_version  [$k8s_status]
  fleet provider $fleet_plugin_dir/pulumi-resource-pulumi-fleet  [$fleet_status]
  PULUMI_HOME   $pulumi_home"
fi

if ((want_env)); then
  printf 'export PATH=%q:"$PATH"\n' "$bin_dir"
  printf 'export PULUMI_HOME=%q\n' "$pulumi_home"
  printf 'export PULUMI_FLEET_PULUMI_ROOT=%q\n' "$(dirname "$bin_dir")"
  printf 'export PULUMI_FLEET_PROVIDER_VERSION=%q\n' "$fleet_version"
  # The CLI's version, so the Automation API need not start it once per operation to ask.
  if [[ $cli_version == v[0-9]* ]]; then printf 'export PULUMI_FLEET_PULUMI_VERSION=%q\n' "${cli_version#v}"; fi
  printf 'export PULUMI_SKIP_UPDATE_CHECK=true\n'
  printf 'export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true\n'
  printf 'export PULUMI_IGNORE_AMBIENT_PLUGINS=true\n'
fi
