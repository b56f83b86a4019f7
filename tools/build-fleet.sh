#!/usr/bin/env bash
# Build Rancher Fleet's own controller, agent and CLI (fleetcontroller, fleetagent, fleet) from its
# published Go module, and the Helm CLI of the Helm release Fleet links (its agent deploys through
# Helm's Go library: the benchmark compares with `helm install` of the same objects), for the
# side-by-side benchmark only (`npm run bench -- fleet`, bench/fleet.ts).
# Nothing of Fleet is in this repository, and neither `npm test` nor `npm start` runs this script.
#
# Pinned to v0.16.0: the newest release the Go module proxy here serves (v0.16.1 answers 403).
# The public checksum database knows both modules, so no GONOSUMDB is needed; the zip hashes are
# also checked against the pins below, so a changed module fails. Fleet's go.mod replaces
# github.com/rancher/fleet/pkg/apis with ./pkg/apis, a nested module its zip leaves out, and pins
# k8s.io/* with further replaces that apply only to the main module: so the module is unpacked
# into the cache, its pkg/apis module put back in place, and built there as the main module,
# with Fleet's release flags (.goreleaser.yaml: -w -s and the version stamp).
#
# Usage:
#   tools/build-fleet.sh             build, or reuse a finished build; report on stderr
#   tools/build-fleet.sh --path      the same, then print the directory holding the four binaries
#                                    (Fleet's CRD manifest is ../share/crds.yaml beside it)
#
# Environment: PULUMI_FLEET_CACHE (cache root), PULUMI_FLEET_REBUILD=1, GOPROXY/GOMODCACHE/GOCACHE.
set -euo pipefail

module=github.com/rancher/fleet
version=v0.16.0
sum=h1:F2TGCISi1mvvgJ5UFkHj/YY4WYLa37MrJspru6eKoaA=
apis_sum=h1:M1O9JjqInoAVT+rjG8K56eywhwDtMYfiSS1ImNEg9PQ=
commit=c1a4325041578226f4f333b9f05d651ee4b03577

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${PULUMI_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-fleet}
# shellcheck source=tools/lib.sh
source "$tools_dir/lib.sh"
path_flag_args "$0" "$@"
go_build_env

dir=$cache_root/tools/fleet-$version
lock_dir "$dir"
outs=(fleetcontroller fleetagent fleet helm)
ldflags="-w -s -X $module/pkg/version.GitCommit=$commit -X $module/pkg/version.Version=$version"
hash=$(hash_of "$ldflags $sum $apis_sum ${outs[*]}" "$tools_dir/build-fleet.sh")
ok=1
for o in "${outs[@]}"; do [[ -x $dir/bin/$o ]] || ok=0; done
[[ -f $dir/share/crds.yaml ]] || ok=0
t_start=$(now)
if [[ ${PULUMI_FLEET_REBUILD:-} != 1 && $ok == 1 && -f $dir/.stamp && $(<"$dir/.stamp") == "$hash" ]]; then
  status=reused
else
  rm -f "$dir/.stamp"
  src=$(pinned_module_dir "$module@$version" "$sum")
  apis=$(pinned_module_dir "$module/pkg/apis@$version" "$apis_sum")
  build_begin "fleet-$version" "$cache_root/tools/.durations"
  rm -rf "$dir/src"
  cp -r "$src" "$dir/src"
  chmod -R u+w "$dir/src"
  rm -rf "$dir/src/pkg/apis"
  cp -r "$apis" "$dir/src/pkg/apis"
  chmod -R u+w "$dir/src/pkg/apis"
  mkdir -p "$dir/bin"
  (cd "$dir/src" && go_quiet build -mod=readonly -trimpath -ldflags "$ldflags" -o "$dir/bin/" ./cmd/fleetcontroller ./cmd/fleetagent ./cmd/fleetcli)
  mv "$dir/bin/fleetcli" "$dir/bin/fleet"
  # Helm's CLI at the version Fleet's go.mod selects; -mod=mod adds the CLI's few extra
  # dependencies to this copy's go.sum (checked against the checksum database as usual).
  helm_version=$(cd "$dir/src" && go list -mod=readonly -m -f '{{.Version}}' helm.sh/helm/v4)
  (cd "$dir/src" && go_quiet build -mod=mod -trimpath -ldflags "-w -s -X helm.sh/helm/v4/internal/version.version=$helm_version" -o "$dir/bin/helm" helm.sh/helm/v4/cmd/helm)
  # Keep only what the benchmark reads: the CRDs.
  mkdir -p "$dir/share"
  cp "$dir/src/charts/fleet-crd/templates/crds.yaml" "$dir/share/crds.yaml"
  rm -rf "$dir/src"
  printf '%s\n' "$hash" >"$dir/.stamp"
  build_end "fleet-$version" "$cache_root/tools/.durations"
  status="built in $(<"$cache_root/tools/.durations/fleet-$version")"
fi
exec 9>&-

vlog "Fleet $version ($(go env GOVERSION), total $(since "$t_start"))
  bin dir  $dir/bin  [$status]"
if ((want_path)); then printf '%s\n' "$dir/bin"; fi
exit 0
