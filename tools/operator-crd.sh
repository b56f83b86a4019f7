#!/usr/bin/env bash
# Print the path of the Pulumi Kubernetes Operator's Stack CustomResourceDefinition, taken from the
# operator's published Go module (downloaded once into the Go module cache, outside the repository).
# Used by the test that server-side dry-runs `npm run shards -- --operator-stacks` against a live API server.
#
# The Go module proxy here serves only github.com/pulumi/pulumi-kubernetes-operator v1.16.0 (no /v2
# module), and the public checksum database does not know it: it is downloaded with
# GONOSUMDB=github.com/pulumi/pulumi-kubernetes-operator (that module only), and its zip hash is then
# checked against the pin below (recorded on first download, 2026-11-24), so a changed module fails.
set -euo pipefail

module=github.com/pulumi/pulumi-kubernetes-operator
version=v1.16.0
sum=h1:HSgXateOE1GAgetlqB85iRx5EbcCfvLI7WeDEny9fVA=

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/lib.sh
source "$tools_dir/lib.sh"
go_build_env
dir=$(GONOSUMDB=$module pinned_module_dir "$module@$version" "$sum")
crd=$dir/deploy/crds/pulumi.com_stacks.yaml
[[ -f $crd ]] || die "$crd not found in $module@$version"
printf '%s\n' "$crd"
