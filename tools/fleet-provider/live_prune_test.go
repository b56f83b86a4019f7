//go:build live

package main

// A pair's prune against a real API server: what left the set is deleted by the time the apply
// returns, and the delete policy is obeyed: a retained object stays, one another owner relabelled
// stays, and the propagation reaches the server (orphan: a Deployment goes, its ReplicaSet stays).

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestLivePruneDeletesWhatLeftTheSet(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	kept, retained := liveConfigMap(ns, "kept", map[string]any{"k": "v"}), liveConfigMap(ns, "retained", map[string]any{"k": "v"})
	dropped, taken := liveConfigMap(ns, "dropped", map[string]any{"k": "v"}), liveConfigMap(ns, "taken", map[string]any{"k": "v"})
	spec := specOf("p-1", kept, retained, dropped, taken)
	r := spec.Objects[keyOf(manifestObject(retained))]
	r.Retain = "keepResources"
	spec.Objects[keyOf(manifestObject(retained))] = r
	first := applied(t, live, nil, spec)
	mustBeReady(t, first)

	// Another owner takes one over: it relabels it, so it no longer carries the pair's owner labels.
	u := liveObject(t, "v1", "ConfigMap", ns, "taken")
	patch := client.MergeFrom(u.DeepCopy())
	if err := unstructured.SetNestedField(u.Object, "another-team", "metadata", "labels", "fleet.cattle.io/repo-name"); err != nil {
		t.Fatal(err)
	}
	if err := live.Client().Patch(t.Context(), u, patch); err != nil {
		t.Fatalf("relabelling by hand: %v", err)
	}

	next := applied(t, live, first, specOf("p-2", kept))
	mustBeReady(t, next)
	if liveObject(t, "v1", "ConfigMap", ns, "dropped") != nil {
		t.Fatal("the ConfigMap that left the set is still there when the apply returned")
	}
	for _, name := range []string{"kept", "retained", "taken"} {
		if liveObject(t, "v1", "ConfigMap", ns, name) == nil {
			t.Fatalf("ConfigMap %s was deleted", name)
		}
	}
	if want := []string{keyOf(manifestObject(retained)) + ": keepResources"}; !reflect.DeepEqual(next.Retained, want) {
		t.Fatalf("retained %q, want %q", next.Retained, want)
	}
	if len(next.Inventory) != 1 || next.Inventory[0].Key() != keyOf(manifestObject(kept)) {
		t.Fatalf("inventory %v, want only the kept ConfigMap", next.Inventory)
	}
}

func TestLivePruneOrphansAsThePolicySays(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	orphaning := func(id string, manifests ...map[string]any) Spec {
		s := specOf(id, manifests...)
		s.DeletePolicy.Propagation = "orphan"
		return s
	}
	first := applied(t, live, nil, orphaning("o-1", deployment(ns, "web", "100m"), liveConfigMap(ns, "stays", map[string]any{"k": "v"})))
	mustBeReady(t, first)
	if sets := replicaSets(t, ns); len(sets) != 1 || len(sets[0].GetOwnerReferences()) != 1 {
		t.Fatalf("ReplicaSets of the Deployment: %d, want one it owns", len(sets))
	}

	next := applied(t, live, first, orphaning("o-2", liveConfigMap(ns, "stays", map[string]any{"k": "v"})))
	mustBeReady(t, next)
	if liveObject(t, "apps/v1", "Deployment", ns, "web") != nil {
		t.Fatal("the pruned Deployment is still there when the apply returned")
	}
	sets := replicaSets(t, ns)
	if len(sets) != 1 {
		t.Fatalf("%d ReplicaSets after the prune with propagation orphan, want its one left", len(sets))
	}
	if refs := sets[0].GetOwnerReferences(); len(refs) != 0 {
		t.Fatalf("the ReplicaSet still has owner references %v: it was not orphaned", refs)
	}
}

// deployment is a one-replica Deployment whose pod requests cpu (the kwok node has 32).
func deployment(namespace, name, cpu string) map[string]any {
	app := map[string]any{"app": name}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": namespace, "labels": labelsOf(owner)},
		"spec": map[string]any{
			"replicas": 1,
			"selector": map[string]any{"matchLabels": app},
			"template": map[string]any{
				"metadata": map[string]any{"labels": app},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "app", "image": "registry.invalid/app:1",
					"resources": map[string]any{"requests": map[string]any{"cpu": cpu}},
				}}},
			},
		},
	}
}

func replicaSets(t *testing.T, namespace string) []unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("apps/v1")
	list.SetKind("ReplicaSetList")
	if err := live.Client().List(t.Context(), list, client.InNamespace(namespace)); err != nil {
		t.Fatalf("listing ReplicaSets: %v", err)
	}
	return list.Items
}
