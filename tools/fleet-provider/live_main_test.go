//go:build live

package main

// The live tests: the provider's apply, prune and wait (applyPair, deletePair, driftOf, as the
// server calls them) against a real API server, one of the project's local clusters, connected once
// here as the provider connects (connect). Each test works in a namespace of its own, so they run at
// once. Plain `go test` leaves them out (build tag live); `bash scripts/go-tests.sh --live` starts a
// cluster, runs them and stops it. Without a cluster they fail, saying so: nothing skips itself.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// liveKubeconfigEnv names the kubeconfig file of the cluster the live tests use (a throwaway one:
// they create and delete namespaces and a CRD).
const liveKubeconfigEnv = "FLEET_PROVIDER_LIVE_KUBECONFIG"

// live is the provider's own connection to the test cluster.
var live *ssa.ResourceManager

func TestMain(m *testing.M) {
	path := os.Getenv(liveKubeconfigEnv)
	if path == "" {
		fmt.Fprintf(os.Stderr, "FAIL: the live tests (build tag live) need a Kubernetes cluster: %s names its kubeconfig.\n"+
			"Run them with one local cluster started and stopped for them: bash scripts/go-tests.sh --live\n", liveKubeconfigEnv)
		os.Exit(1)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %s: %v\n", liveKubeconfigEnv, err)
		os.Exit(1)
	}
	if live, err = connect(Config{Kubeconfig: string(raw), ClusterIdentifier: "live-test"}); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: connecting to the cluster of %s (%s): %v\n", liveKubeconfigEnv, path, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// owner are the labels every test object carries, the pairs' delete policy's owner labels.
var owner = map[string]string{"fleet.cattle.io/repo-name": "go-live", "app.kubernetes.io/managed-by": "pulumi-fleet"}

var (
	namespaces atomic.Int64
	// Another run's namespaces may still be terminating on the same cluster.
	runID    = rand.IntN(1_000_000)
	nonLabel = regexp.MustCompile(`[^a-z0-9-]+`)
)

// liveNamespace creates a namespace for one test, deleted when it ends.
func liveNamespace(t *testing.T) string {
	t.Helper()
	test := nonLabel.ReplaceAllString(strings.ToLower(t.Name()), "-")
	name := fmt.Sprintf("go-live-%.36s-%d-%d", test, runID, namespaces.Add(1))
	ns := manifestObject(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}})
	if err := live.Client().Create(t.Context(), ns); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { _ = live.Client().Delete(context.Background(), ns) })
	return name
}

func manifestObject(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

// liveConfigMap is a ConfigMap of the set, with the owner labels.
func liveConfigMap(namespace, name string, data map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": namespace, "labels": labelsOf(owner)},
		"data":     data,
	}
}

func labelsOf(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// specOf is a pair's spec holding the manifests, deleted in the background with the owner labels.
func specOf(deploymentID string, manifests ...map[string]any) Spec {
	objects := map[string]DesiredObject{}
	for _, m := range manifests {
		objects[keyOf(manifestObject(m))] = DesiredObject{Manifest: m}
	}
	return Spec{DeploymentID: deploymentID, Objects: objects, TimeoutSeconds: 60, DeletePolicy: DeletePolicy{Propagation: "background", OwnerLabels: owner}}
}

// applied applies spec after prev (nil: a new pair) as the server's Create and Update do, and returns
// the pair's outputs.
func applied(t *testing.T, rm *ssa.ResourceManager, prev *Outputs, spec Spec) *Outputs {
	t.Helper()
	st := applyPair(t.Context(), rm, prev, spec, prev != nil)
	return &Outputs{Spec: spec, Status: st}
}

// mustBeReady fails the test unless the pair is Ready.
func mustBeReady(t *testing.T, o *Outputs) {
	t.Helper()
	if o.State != StateReady {
		t.Fatalf("state %s, want Ready; messages: %q", o.State, o.Messages)
	}
}

// liveObject reads an object back from the cluster; nil when it, or its kind, is not there.
func liveObject(t *testing.T, apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	u := manifestObject(map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": namespace}})
	if err := live.Client().Get(t.Context(), client.ObjectKeyFromObject(u), u); err != nil {
		if isGone(err) {
			return nil
		}
		t.Fatalf("reading %s %s/%s: %v", kind, namespace, name, err)
	}
	return u
}

// writeCounter is the test cluster's client that counts the requests that write (a dry run does
// not), so a test sees what an apply sent, not only what the server kept: the API server itself
// skips a no-op server-side apply, so resourceVersions alone cannot tell. (The provider writes no
// status subresource, so those are not counted.)
type writeCounter struct {
	client.Client
	writes, dryRuns atomic.Int64
}

// countingManager is the provider's resource manager on a writeCounter over the live client.
func countingManager() (*ssa.ResourceManager, *writeCounter) {
	w := &writeCounter{Client: live.Client()}
	return managerOn(w, polling.NewStatusPoller(w, w.RESTMapper(), polling.Options{})), w
}

func (w *writeCounter) count(dryRun []string) {
	if len(dryRun) > 0 {
		w.dryRuns.Add(1)
	} else {
		w.writes.Add(1)
	}
}

func (w *writeCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	o := (&client.PatchOptions{}).ApplyOptions(opts)
	w.count(o.DryRun)
	return w.Client.Patch(ctx, obj, patch, opts...)
}

func (w *writeCounter) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	o := (&client.ApplyOptions{}).ApplyOptions(opts)
	w.count(o.DryRun)
	return w.Client.Apply(ctx, obj, opts...)
}

func (w *writeCounter) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	o := (&client.CreateOptions{}).ApplyOptions(opts)
	w.count(o.DryRun)
	return w.Client.Create(ctx, obj, opts...)
}

func (w *writeCounter) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	o := (&client.UpdateOptions{}).ApplyOptions(opts)
	w.count(o.DryRun)
	return w.Client.Update(ctx, obj, opts...)
}

func (w *writeCounter) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	o := (&client.DeleteOptions{}).ApplyOptions(opts)
	w.count(o.DryRun)
	return w.Client.Delete(ctx, obj, opts...)
}

// reset zeroes the counts before the step a test looks at.
func (w *writeCounter) reset() {
	w.writes.Store(0)
	w.dryRuns.Store(0)
}
