package main

// Who owns the objects a bundle is about to create: Helm (and so Fleet, unless helm.takeOwnership)
// refuses to install over an object that already exists on the cluster and is not its own. The
// Pulumi Kubernetes provider at the pinned version creates with a server-side apply, which silently
// adopts such an object, and a later prune would delete it. This reads, per cluster, the metadata of
// each object that exists, with client-go: the kubeconfig (text, path or the ambient one with a
// context) is loaded by clientcmd, exec credential plugins and client certificates included, exactly
// as kubectl would, and kinds are mapped to resources by discovery.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const ownersTimeout = 60 * time.Second

// jobTimeout is a job's own deadline when it names one, else the tool's default.
func jobTimeout(seconds int, fallback time.Duration) time.Duration {
	if seconds > 0 {
		return time.Duration(seconds) * time.Second
	}
	return fallback
}

// deadlineError says that the job's deadline ended it, rather than the request it was in when it did.
func deadlineError(ctx context.Context, err error, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the read did not finish within %s: %w", timeout, err)
	}
	return err
}

func readOwners(job OwnersJob) OwnersResult {
	config, mapper, err := clusterMapper(job.Kubeconfig, job.Context)
	if err != nil {
		return OwnersResult{Error: err.Error()}
	}
	client, err := metadata.NewForConfig(config)
	if err != nil {
		return OwnersResult{Error: err.Error()}
	}
	var del *metav1.DeletionPropagation
	if job.Delete {
		if del, err = deletePropagation(job.Propagation); err != nil {
			return OwnersResult{Error: err.Error()}
		}
	}
	timeout := jobTimeout(job.TimeoutSeconds, ownersTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	objects, err := lookUp(ctx, mapper, client, job.Objects, del)
	if err != nil {
		return OwnersResult{Error: deadlineError(ctx, err, timeout).Error()}
	}
	return OwnersResult{Objects: objects}
}

// lookUp reads each ref's live metadata (nil when absent): one list for the refs that share a kind
// and namespace when they are many (a new bundle's objects), a GET for each of the others; with del,
// always a GET, as the delete is made against that read.
func lookUp(ctx context.Context, mapper meta.RESTMapper, client metadata.Interface, refs []ObjectRef, del *metav1.DeletionPropagation) ([]*LiveObject, error) {
	objects := make([]*LiveObject, len(refs))
	toGet := make([]int, 0, len(refs))
	if del == nil {
		listed, rest, err := listInGroups(ctx, mapper, client, refs)
		if err != nil {
			return nil, err
		}
		for i, live := range listed {
			objects[i] = live
		}
		toGet = rest
	} else {
		for i := range refs {
			toGet = append(toGet, i)
		}
	}
	var mu sync.Mutex
	var firstErr error
	limit := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for _, i := range toGet {
		ref := refs[i]
		wg.Add(1)
		limit <- struct{}{}
		go func() {
			defer func() { <-limit; wg.Done() }()
			live, err := readObject(ctx, mapper, client, ref, del)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("%s %s: %w", ref.Kind, qualifiedName(ref), err)
			}
			objects[i] = live
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return objects, nil
}

// deletePropagation is the received propagation as Kubernetes spells it: a sweep has no default of its own.
func deletePropagation(p string) (*metav1.DeletionPropagation, error) {
	policy := map[string]metav1.DeletionPropagation{
		"background": metav1.DeletePropagationBackground, "foreground": metav1.DeletePropagationForeground, "orphan": metav1.DeletePropagationOrphan,
	}[p]
	if policy == "" {
		return nil, fmt.Errorf("a delete job's propagation %q is not background, foreground or orphan", p)
	}
	return &policy, nil
}

// readObject reads an object's metadata; with del (a propagation), it also deletes it if it carries ref's Labels.
func readObject(ctx context.Context, mapper meta.RESTMapper, client metadata.Interface, ref ObjectRef, del *metav1.DeletionPropagation) (*LiveObject, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	mapping, err := mapper.RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if meta.IsNoMatchError(err) || discovery.IsGroupDiscoveryFailedError(err) && isNotFoundGroup(err) {
		// The kind is not served (yet): a CRD of this update, so no object of it can exist.
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var resource metadata.ResourceInterface = client.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		resource = client.Resource(mapping.Resource).Namespace(ref.Namespace)
	}
	obj, err := resource.Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	live := liveOf(obj)
	if del != nil && obj.DeletionTimestamp == nil && hasLabels(obj.Labels, ref.Labels) {
		uid := obj.UID // never the object someone re-created meanwhile under the same name
		err = resource.Delete(ctx, ref.Name, metav1.DeleteOptions{PropagationPolicy: del, Preconditions: &metav1.Preconditions{UID: &uid}})
		switch {
		case apierrors.IsConflict(err):
			// The UID precondition failed: someone re-created the object meanwhile; it is not ours to delete.
		case err != nil && !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("deleting: %w", err)
		default:
			live.Deleted = true
		}
	}
	return live, nil
}

func hasLabels(have, want map[string]string) bool {
	if len(want) == 0 {
		return false // an unlabelled ref is never deleted
	}
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// isNotFoundGroup: discovery of a group/version that does not exist (404), as opposed to one that failed.
func isNotFoundGroup(err error) bool {
	var failed *discovery.ErrGroupDiscoveryFailed
	if !errors.As(err, &failed) {
		return false
	}
	for _, e := range failed.Groups {
		if !apierrors.IsNotFound(e) {
			return false
		}
	}
	return true
}

func qualifiedName(ref ObjectRef) string {
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}

// loadKubeconfig reads the kubeconfig given as text, or as a path: a file is loaded by clientcmd, so
// relative certificate and key paths in it resolve against the file's own directory, as kubectl does.
// Nil for the ambient kubeconfig.
func loadKubeconfig(kubeconfig string) (*clientcmdapi.Config, error) {
	if kubeconfig == "" {
		return nil, nil
	}
	if !strings.Contains(kubeconfig, "\n") {
		if _, err := os.Stat(kubeconfig); err == nil {
			return clientcmd.LoadFromFile(kubeconfig)
		}
	}
	return clientcmd.Load([]byte(kubeconfig))
}

// clientConfigOf loads the cluster's kubeconfig as the provider reads it: the text itself, else a path
// to it, else the ambient kubeconfig; with the given context.
func clientConfigOf(kubeconfig, context string) (clientcmd.ClientConfig, error) {
	cfg, err := loadKubeconfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		return clientcmd.NewNonInteractiveClientConfig(*cfg, context, &clientcmd.ConfigOverrides{}, nil), nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}), nil
}

// clusterClient: a cluster's rest config, as kubectl loads the kubeconfig, with the client settings
// every read of this program uses, and a discovery client on it.
// clusterMapper is clusterClient with a REST mapper over its discovery, cached for the one job.
func clusterMapper(kubeconfig, context string) (*rest.Config, meta.RESTMapper, error) {
	config, disco, err := clusterClient(kubeconfig, context)
	if err != nil {
		return nil, nil, err
	}
	return config, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)), nil
}

func clusterClient(kubeconfig, context string) (*rest.Config, *discovery.DiscoveryClient, error) {
	loader, err := clientConfigOf(kubeconfig, context)
	if err != nil {
		return nil, nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	config, err := loader.ClientConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	config.Timeout = 20 * time.Second
	// One GET per object a first up creates: client-go's limiter at 50/s made a 500-object bundle's read
	// take 8 s; the Kubernetes provider that applies them right after runs at 500/s (automation/stack.ts).
	config.QPS, config.Burst = 500, 500
	disco, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, nil, err
	}
	return config, disco, nil
}
