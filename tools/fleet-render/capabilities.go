package main

// What a chart sees of its cluster. Fleet renders each bundle on the agent, in the target cluster,
// where Helm's .Capabilities come from discovery (internal/helmdeployer/capabilities.go): the server's
// GitVersion, Major and Minor, and every group/version and group/version/kind it serves, replacing
// Helm's defaults. A discovery job reads the same with client-go and Helm's own GetVersionSet; the
// render job then gets them whole (helmTemplate).

import (
	"fmt"
	"sort"

	"helm.sh/helm/v4/pkg/action"
	"k8s.io/client-go/discovery"
)

func discover(job DiscoveryJob) DiscoveryResult {
	_, dc, err := clusterClient(job.Kubeconfig, job.Context)
	if err != nil {
		return DiscoveryResult{Error: err.Error()}
	}
	version, err := dc.ServerVersion()
	if err != nil {
		return DiscoveryResult{Error: fmt.Sprintf("reading the server version: %v", err)}
	}
	// As Helm and Fleet: an aggregated API that does not answer (an orphaned APIService) leaves the
	// other groups' versions in the set; any other failure is an error.
	versions, err := action.GetVersionSet(dc)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return DiscoveryResult{Error: fmt.Sprintf("reading the served API versions: %v", err)}
	}
	caps := &Capabilities{APIVersions: append([]string(nil), versions...)}
	sort.Strings(caps.APIVersions) // Helm collects them from a map: sorted, the same cluster gives the same bytes
	caps.KubeVersion.Version, caps.KubeVersion.Major, caps.KubeVersion.Minor = version.GitVersion, version.Major, version.Minor
	return DiscoveryResult{Capabilities: caps}
}
