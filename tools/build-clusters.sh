#!/usr/bin/env bash
# Build the programs of a local Kubernetes control plane from the Go modules pinned in
# tools/control-plane (kube-apiserver, kube-controller-manager, kube-scheduler), tools/etcd and
# tools/kwok, into a per-user cache outside the repository. Each binary is stamped with its real
# version (`kube-apiserver --version` says Kubernetes v1.36.3, not v0.0.0). Used by the local
# clusters of the end-to-end tests (automation/clusters/local-clusters.ts, `npm run clusters`).
#
# Usage:
#   tools/build-clusters.sh             build, or reuse finished builds; report on stderr
#   tools/build-clusters.sh --bin-dir   the same, then print the directory holding all five binaries
#   ... --kubectl                      also build kubectl of the same release (the benchmarks compare with it)
#
# Environment: PULUMI_FLEET_CACHE (cache root, as for build-pulumi.sh), PULUMI_FLEET_REBUILD=1,
# GOPROXY/GOMODCACHE/GOCACHE/GOFLAGS. Each component builds into
# $PULUMI_FLEET_CACHE/tools/<component>-<version>/ with a stamp (a hash of its go.mod, go.sum and
# flags) written last, and is linked into $PULUMI_FLEET_CACHE/tools/clusters-<versions>/bin.
set -euo pipefail

want_bin_dir=0
want_kubectl=0
for a in "$@"; do
  case "$a" in
    --bin-dir) want_bin_dir=1 ;;
    --kubectl) want_kubectl=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-clusters.sh: unknown argument: $a (try --help)" >&2; exit 2 ;;
  esac
done

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${PULUMI_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet}
# shellcheck source=tools/lib.sh
source "$tools_dir/lib.sh"
go_build_env

k8s_version=$(mod_version k8s.io/kubernetes "$tools_dir/control-plane/go.mod")
etcd_version=$(mod_version go.etcd.io/etcd/server/v3 "$tools_dir/etcd/go.mod")
kwok_version=$(mod_version sigs.k8s.io/kwok "$tools_dir/kwok/go.mod")
[[ -n $k8s_version && -n $etcd_version && -n $kwok_version ]] ||
  die "could not read the pinned versions (k8s '$k8s_version', etcd '$etcd_version', kwok '$kwok_version') from tools/*/go.mod"

# build <name> <module dir> <version> <ldflags> <tags> <output binary>... -- <packages>...
# Builds the packages of one module with one `go build` (shared compile), unless the stamp matches.
build() {
  local name=$1 mod=$2 version=$3 ldflags=$4 tags=$5
  shift 5
  local outs=() pkgs=()
  while [[ $1 != -- ]]; do outs+=("$1"); shift; done
  shift
  pkgs=("$@")
  local dir=$cache_root/tools/$name-$version
  lock_dir "$dir"
  local stamp=$dir/.stamp hash
  hash=$(hash_of "$ldflags $tags ${pkgs[*]} ${outs[*]}" "$mod/go.mod" "$mod/go.sum")
  local ok=1 o
  for o in "${outs[@]}"; do [[ -x $dir/bin/$o ]] || ok=0; done
  if [[ ${PULUMI_FLEET_REBUILD:-} != 1 && $ok == 1 && -f $stamp && $(<"$stamp") == "$hash" ]]; then
    status[$name]="reused"
  else
    rm -f "$stamp"
    mkdir -p "$dir/bin"
    build_begin "$name" "$cache_root/tools/.durations"
    if ((${#pkgs[@]} == 1)); then
      (cd "$mod" && go_quiet build -mod=readonly -trimpath -tags "$tags" -ldflags "$ldflags" -o "$dir/bin/${outs[0]}" "${pkgs[0]}")
    else
      (cd "$mod" && go_quiet build -mod=readonly -trimpath -tags "$tags" -ldflags "$ldflags" -o "$dir/bin/" "${pkgs[@]}")
    fi
    build_end "$name" "$cache_root/tools/.durations"
    printf '%s\n' "$hash" >"$stamp"
    status[$name]="built in $(<"$cache_root/tools/.durations/$name")"
  fi
  exec 9>&-
  for o in "${outs[@]}"; do ln -sfn "$dir/bin/$o" "$bin_dir/$o"; done
}

declare -A status
t_start=$(now)
bin_dir=$cache_root/tools/clusters-k8s-$k8s_version-etcd-$etcd_version-kwok-$kwok_version/bin
mkdir -p "$bin_dir"

# Kubernetes' own release flags (hack/lib/golang.sh, hack/lib/version.sh): static, stripped, version-stamped.
minor=$(cut -d. -f2 <<<"$k8s_version")
k8s_ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
build kubernetes "$tools_dir/control-plane" "$k8s_version" "$k8s_ldflags" selinux,notest,grpcnotrace \
  kube-apiserver kube-controller-manager kube-scheduler -- \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
if ((want_kubectl)); then
  build kubectl "$tools_dir/control-plane" "$k8s_version" "$k8s_ldflags" selinux,notest,grpcnotrace kubectl -- k8s.io/kubernetes/cmd/kubectl
fi
build etcd "$tools_dir/etcd" "$etcd_version" "-s -w" "" etcd -- go.etcd.io/etcd/server/v3
build kwok "$tools_dir/kwok" "$kwok_version" "-s -w" "" kwok -- sigs.k8s.io/kwok/cmd/kwok

vlog "pulumi-fleet local clusters ($(go env GOVERSION), total $(since "$t_start"))
  bin dir     $bin_dir
  kubernetes  $k8s_version  [${status[kubernetes]}]
  etcd        $etcd_version  [${status[etcd]}]
  kwok        $kwok_version  [${status[kwok]}]${status[kubectl]:+
  kubectl     $k8s_version  [${status[kubectl]}]}"

((want_bin_dir)) && printf '%s\n' "$bin_dir"
exit 0
