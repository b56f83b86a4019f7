// Command pulumi-resource-kubernetes: the Pulumi Kubernetes resource provider,
// built from the github.com/pulumi/pulumi-kubernetes/provider/v4 Go module
// pinned in go.mod (see tools/build-pulumi.sh).
//
// Upstream's own main package cannot be built from the module zip: it embeds
// files that upstream generates and does not commit. tools/build-pulumi.sh
// copies this file, go.mod and go.sum into a build directory outside the
// repository and generates the two embedded files there, from the module's
// cmd/pulumi-resource-kubernetes/{schema.json,terraform-mapping.json}.
// Building this directory in place fails with "pattern schema-embed.json: no
// matching files found"; that is expected.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

// The package schema with "version" set to the provider version.
//
//go:embed schema-embed.json
var schema []byte

// terraform-mapping.json, re-serialized compactly.
//
//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	// version.Version is set with -ldflags -X by tools/build-pulumi.sh.
	provider.Serve("kubernetes", version.Version, schema, terraformMapping)
}
