// pulumi-resource-pulumi-fleet: the engine's unit of deployment, one BundleDeployment per (bundle,
// cluster) pair. It applies a pair's rendered objects as one set with fluxcd/pkg/ssa (server-side
// apply, CRDs and Namespaces first, prune by inventory, readiness with kstatus) and reports Fleet's
// BundleDeployment status as outputs. A refused apply or a readiness timeout is the pair's state,
// never an engine error, so one bad pair does not stop the update of the others.
//
// Built by tools/build-provider.sh into the tool cache; the engine finds it in the isolated PULUMI_HOME.
package main

import (
	"fmt"
	"os"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/provider"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// version is set at link time (-X main.version=...).
var version = "0.1.0"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--check-health-checks" {
		if err := checkHealthChecksMain(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", packageName, err)
			os.Exit(1)
		}
		return
	}
	err := provider.Main(packageName, func(*provider.HostClient) (pulumirpc.ResourceProviderServer, error) {
		return newServer(version), nil
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", packageName, err)
		os.Exit(1)
	}
}
