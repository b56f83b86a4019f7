package main

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The kinds whose serving the apply waits for are those a CRD of the set defines and another object
// of it uses, once each; a kind the cluster already serves, or a CRD nothing uses, is not waited for.
func TestDefinedKindsUsed(t *testing.T) {
	obj := func(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }
	crd := func(group, kind string) *unstructured.Unstructured {
		return obj(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "x." + group}, "spec": map[string]any{"group": group, "names": map[string]any{"kind": kind}}})
	}
	of := func(apiVersion, kind, name string) *unstructured.Unstructured {
		return obj(map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}})
	}
	staged := []*unstructured.Unstructured{crd("a.example.com", "Widget"), crd("b.example.com", "Unused"), of("v1", "Namespace", "ns")}
	rest := []*unstructured.Unstructured{of("a.example.com/v1", "Widget", "one"), of("a.example.com/v1", "Widget", "two"), of("v1", "ConfigMap", "c"), of("other.example.com/v1", "Widget", "w")}
	want := []schema.GroupVersionKind{{Group: "a.example.com", Version: "v1", Kind: "Widget"}}
	if got := definedKindsUsed(staged, rest); !reflect.DeepEqual(got, want) {
		t.Fatalf("definedKindsUsed = %v, want %v", got, want)
	}
	if got := definedKindsUsed(staged[2:], rest); got != nil {
		t.Fatalf("no CRD in the set: %v, want none", got)
	}
}
