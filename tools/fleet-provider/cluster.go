package main

// The provider's configuration (one provider for the stack, with every cluster's access, and per
// impersonated user, keyed by name; a stack of an earlier version had one provider per cluster) and
// the connections it opens only when a pair is applied, read or deleted: a preview and a no-op never
// talk to a cluster.

import (
	"fmt"
	"sync"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// fieldManager owns the fields this provider applies.
const fieldManager = "pulumi-fleet"

// Config is the provider's configuration, as the Cluster component registers it.
type Config struct {
	// A kubeconfig's content; absent: the runner's (KUBECONFIG or ~/.kube/config).
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
	// Names the cluster whatever its credentials (a rotated kubeconfig changes nothing).
	ClusterIdentifier string `json:"clusterIdentifier,omitempty"`
	// Write manifests under this directory instead of applying them (render mode).
	RenderYamlToDirectory string              `json:"renderYamlToDirectory,omitempty"`
	KubeClientSettings    *KubeClientSettings `json:"kubeClientSettings,omitempty"`
	// A cluster being decommissioned that no longer answers: deleting a pair drops it from the state.
	DeleteUnreachable bool `json:"deleteUnreachable,omitempty"`
	// Every cluster (and impersonated user) this provider serves, by the key a pair's spec names
	// (`cluster`); empty: the provider serves only the cluster the fields above describe.
	Clusters map[string]Config `json:"clusters,omitempty"`
}

type KubeClientSettings struct {
	QPS   float32 `json:"qps,omitempty"`
	Burst int     `json:"burst,omitempty"`
}

// cluster is a configured provider's lazily opened connection.
type cluster struct {
	config Config
	once   sync.Once
	rm     *ssa.ResourceManager
	err    error
}

func (c *cluster) manager() (*ssa.ResourceManager, error) {
	c.once.Do(func() { c.rm, c.err = connect(c.config) })
	return c.rm, c.err
}

func restConfig(cfg Config) (*rest.Config, error) {
	overrides := &clientcmd.ConfigOverrides{CurrentContext: cfg.Context}
	var loader clientcmd.ClientConfig
	if cfg.Kubeconfig != "" {
		raw, err := clientcmd.Load([]byte(cfg.Kubeconfig))
		if err != nil {
			return nil, fmt.Errorf("cluster %s: reading its kubeconfig: %w", cfg.ClusterIdentifier, err)
		}
		loader = clientcmd.NewNonInteractiveClientConfig(*raw, cfg.Context, overrides, nil)
	} else {
		loader = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), overrides)
	}
	rc, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cfg.ClusterIdentifier, err)
	}
	rc.QPS, rc.Burst = 50, 100
	if s := cfg.KubeClientSettings; s != nil {
		if s.QPS > 0 {
			rc.QPS = s.QPS
		}
		if s.Burst > 0 {
			rc.Burst = s.Burst
		}
	}
	return rc, nil
}

func connect(cfg Config) (*ssa.ResourceManager, error) {
	rc, err := restConfig(cfg)
	if err != nil {
		return nil, err
	}
	httpClient, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cfg.ClusterIdentifier, err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(rc, httpClient)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: discovery: %w", cfg.ClusterIdentifier, err)
	}
	kube, err := client.New(rc, client.Options{HTTPClient: httpClient, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cfg.ClusterIdentifier, err)
	}
	return managerOn(kube, polling.NewStatusPoller(kube, mapper, polling.Options{})), nil
}

// managerOn is the provider's resource manager on a client: what it applies is owned by fieldManager,
// its own labels are fleet.cattle.io's, and it reads and waits 8 objects at a time. One home for the
// connection (connect), the readiness wait with health checks (waiter) and the live tests' client.
func managerOn(kube client.Client, poller *polling.StatusPoller) *ssa.ResourceManager {
	rm := ssa.NewResourceManager(kube, poller, ssa.Owner{Field: fieldManager, Group: "fleet.cattle.io"})
	rm.SetConcurrency(8)
	return rm
}
