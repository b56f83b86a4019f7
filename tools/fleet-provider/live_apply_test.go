//go:build live

package main

// A pair's apply against a real API server: a set created, applied again without a write (ssa's
// dry-run diff), one changed object written alone, a hand edit found by a refresh and put back.

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestLiveApplyWritesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	service := map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "namespace": ns, "labels": labelsOf(owner)},
		"spec":     map[string]any{"selector": map[string]any{"app": "web"}, "ports": []any{map[string]any{"port": 80}}},
	}
	spec := specOf("s-1", liveConfigMap(ns, "a", map[string]any{"k": "1"}), liveConfigMap(ns, "b", map[string]any{"k": "1"}), service)

	first := applied(t, live, nil, spec)
	mustBeReady(t, first)
	if len(first.Inventory) != 3 || first.Revision != 1 || first.AppliedDeploymentID != "s-1" {
		t.Fatalf("inventory %v, revision %d, applied %q: want the 3 objects, revision 1, s-1", first.Inventory, first.Revision, first.AppliedDeploymentID)
	}
	for _, id := range first.Inventory {
		u := liveObject(t, stub(id).GetAPIVersion(), id.Kind, id.Namespace, id.Name)
		if u == nil || string(u.GetUID()) != id.UID || id.UID == "" {
			t.Fatalf("inventory entry %+v: the object is not there with that UID (%v)", id, u)
		}
	}

	rm, writes := countingManager()
	before := resourceVersions(t, first.Inventory)
	again := applied(t, rm, first, spec)
	mustBeReady(t, again)
	if n := writes.writes.Load(); n != 0 {
		t.Fatalf("an apply with no change sent %d writes, want none", n)
	}
	if n := writes.dryRuns.Load(); n < 3 {
		t.Fatalf("%d dry runs: each object must be compared with the cluster's (ssa's diff)", n)
	}
	if after := resourceVersions(t, first.Inventory); !equalMaps(before, after) {
		t.Fatalf("resourceVersions changed by an apply with no change: %v, then %v", before, after)
	}

	writes.reset()
	changed := specOf("s-2", liveConfigMap(ns, "a", map[string]any{"k": "2"}), liveConfigMap(ns, "b", map[string]any{"k": "1"}), service)
	third := applied(t, rm, again, changed)
	mustBeReady(t, third)
	if n := writes.writes.Load(); n != 1 {
		t.Fatalf("one object changed: %d writes, want 1", n)
	}
	if got := dataOf(t, ns, "a")["k"]; got != "2" {
		t.Fatalf("ConfigMap a has k=%v, want 2", got)
	}
	after := resourceVersions(t, first.Inventory)
	for _, name := range []string{"b", "web"} {
		if after[name] != before[name] {
			t.Fatalf("%s was written (resourceVersion %s, then %s) though it did not change", name, before[name], after[name])
		}
	}
}

func TestLiveHandEditPutBack(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	spec := specOf("d-1",
		liveConfigMap(ns, "edited", map[string]any{"k": "ours"}),
		liveConfigMap(ns, "deleted", map[string]any{"k": "ours"}),
		liveConfigMap(ns, "untouched", map[string]any{"k": "ours"}))
	spec.CorrectDrift = true
	first := applied(t, live, nil, spec)
	mustBeReady(t, first)

	// By hand: one edited by another field manager (as kubectl edit does), one deleted.
	edited := liveObject(t, "v1", "ConfigMap", ns, "edited")
	patch := client.MergeFrom(edited.DeepCopy())
	if err := unstructured.SetNestedField(edited.Object, "theirs", "data", "k"); err != nil {
		t.Fatal(err)
	}
	if err := live.Client().Patch(t.Context(), edited, patch, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatalf("editing by hand: %v", err)
	}
	if err := live.Client().Delete(t.Context(), liveObject(t, "v1", "ConfigMap", ns, "deleted")); err != nil {
		t.Fatalf("deleting by hand: %v", err)
	}

	// A refresh finds both, as the server's Read does.
	refreshed := *first
	refreshed.Status, refreshed.Live = driftOf(t.Context(), live, *first)
	want := "missing ConfigMap " + ns + "/deleted\nmodified ConfigMap " + ns + "/edited"
	if refreshed.State != StateModified || strings.Join(refreshed.Messages, "\n") != want {
		t.Fatalf("after the hand edits: state %s, messages %q; want Modified, %q", refreshed.State, refreshed.Messages, want)
	}
	if d := diffPair(&refreshed, spec); !d.Changes || d.Retry != "modified on the cluster" {
		t.Fatalf("diff after the refresh: %+v, want a re-apply for the drift", d)
	}

	back := applied(t, live, &refreshed, spec)
	mustBeReady(t, back)
	if got := dataOf(t, ns, "edited")["k"]; got != "ours" {
		t.Fatalf("the hand edit stayed: k=%v", got)
	}
	if got := dataOf(t, ns, "deleted")["k"]; got != "ours" {
		t.Fatalf("the deleted ConfigMap was not created again: k=%v", got)
	}
	if st, _ := driftOf(t.Context(), live, *back); st.State != StateReady || len(st.Drifted) > 0 {
		t.Fatalf("a refresh after the re-apply: state %s, drifted %v; want Ready, none", st.State, st.Drifted)
	}
}

// resourceVersions of the inventory's objects, by name.
func resourceVersions(t *testing.T, ids []InventoryID) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, id := range ids {
		if u := liveObject(t, stub(id).GetAPIVersion(), id.Kind, id.Namespace, id.Name); u != nil {
			out[id.Name] = u.GetResourceVersion()
		}
	}
	return out
}

func dataOf(t *testing.T, namespace, name string) map[string]any {
	t.Helper()
	u := liveObject(t, "v1", "ConfigMap", namespace, name)
	if u == nil {
		return nil
	}
	data, _, _ := unstructured.NestedMap(u.Object, "data")
	return data
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
