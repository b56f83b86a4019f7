//go:build live

package main

// A pair's readiness wait against a real API server (kwok runs the pods a scheduler placed): Ready for
// a workload that becomes ready, NotReady after the timeout with the pod's own words for one that
// cannot; a CRD and its custom resource in one set (the definition established first), judged by an
// operator's health check, and deleted with the pair (the resource before its definition).

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestLiveWaitForReadiness(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	t.Run("Ready once its pod runs", func(t *testing.T) {
		t.Parallel()
		o := applied(t, live, nil, specOf("w-1", deployment(ns, "fits", "100m")))
		mustBeReady(t, o)
	})
	t.Run("NotReady after the timeout with the pod's words", func(t *testing.T) {
		t.Parallel()
		spec := specOf("w-2", deployment(ns, "too-big", "1000"))
		spec.TimeoutSeconds = 6
		o := applied(t, live, nil, spec)
		msg := strings.Join(o.Messages, "\n")
		if o.State != StateNotReady || !strings.Contains(msg, "Deployment "+ns+"/too-big is not ready after the timeout of 6s") || !strings.Contains(msg, "Insufficient cpu") {
			t.Fatalf("state %s, messages %q: want NotReady naming the Deployment, the timeout and the scheduler's words (Insufficient cpu)", o.State, o.Messages)
		}
	})
}

func TestLiveCustomResourceWithItsDefinition(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	crd := widgetDefinition()
	t.Cleanup(func() { _ = live.Client().Delete(context.Background(), manifestObject(widgetDefinition())) })
	widget := map[string]any{
		"apiVersion": "golive.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": ns, "labels": labelsOf(owner)},
		"spec":     map[string]any{"size": 3},
	}

	// One set, a first apply: the resource is applied once its definition is established.
	spec := specOf("c-1", crd, widget)
	first := applied(t, live, nil, spec)
	mustBeReady(t, first)
	if u := liveObject(t, "golive.example.com/v1", "Widget", ns, "w"); u == nil {
		t.Fatal("the Widget is not there")
	}

	// An operator's health check judges it: not ready until its status says so.
	checked := spec
	checked.DeploymentID = "c-2"
	checked.TimeoutSeconds = 3
	checked.HealthChecks = []HealthCheck{{APIVersion: "golive.example.com/v1", Kind: "Widget", Current: `has(self.status) && self.status.phase == "Ready"`}}
	waiting := applied(t, live, first, checked)
	msg := strings.Join(waiting.Messages, "\n")
	if waiting.State != StateNotReady || !strings.Contains(msg, "Widget "+ns+"/w is not ready after the timeout of 3s") || !strings.Contains(msg, "is false") {
		t.Fatalf("state %s, messages %q: want NotReady naming the Widget and its health check", waiting.State, waiting.Messages)
	}
	u := liveObject(t, "golive.example.com/v1", "Widget", ns, "w")
	patch := client.MergeFrom(u.DeepCopy())
	if err := unstructured.SetNestedField(u.Object, "Ready", "status", "phase"); err != nil {
		t.Fatal(err)
	}
	if err := live.Client().Status().Patch(t.Context(), u, patch); err != nil {
		t.Fatalf("setting the Widget's status: %v", err)
	}
	mustBeReady(t, applied(t, live, waiting, checked))

	// Deleting the pair: the Widget, then its definition, both gone when it returns.
	if err := deletePair(t.Context(), live, *first); err != nil {
		t.Fatalf("deleting the pair: %v", err)
	}
	if liveObject(t, "golive.example.com/v1", "Widget", ns, "w") != nil || liveObject(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.golive.example.com") != nil {
		t.Fatal("the Widget or its definition is still there after the pair's deletion")
	}
}

func widgetDefinition() map[string]any {
	open := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.golive.example.com", "labels": labelsOf(owner)},
		"spec": map[string]any{
			"group": "golive.example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "properties": map[string]any{"spec": open, "status": open},
				}},
			}},
		},
	}
}
