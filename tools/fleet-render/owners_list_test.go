package main

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metadatafake "k8s.io/client-go/metadata/fake"
)

func configMapMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	return m
}

func configMap(namespace, name string, labels map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
	}
}

func refs(namespace string, n int) []ObjectRef {
	out := make([]ObjectRef, n)
	for i := range out {
		out[i] = ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: namespace, Name: fmt.Sprintf("cm-%d", i)}
	}
	return out
}

func verbs(client *metadatafake.FakeMetadataClient) map[string]int {
	counts := map[string]int{}
	for _, a := range client.Actions() {
		counts[a.GetVerb()]++
	}
	return counts
}

// Many objects of one kind in one namespace are looked up with one list, and what exists is found with its owner.
func TestManyObjectsOfOneKindAreListedOnce(t *testing.T) {
	scheme := runtime.NewScheme()
	metav1.AddMetaToScheme(scheme)
	client := metadatafake.NewSimpleMetadataClient(scheme,
		configMap("big", "cm-3", map[string]string{"owner": "a"}), configMap("big", "other", nil), configMap("elsewhere", "cm-4", nil))
	got, err := lookUp(context.Background(), configMapMapper(), client, refs("big", 40), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := verbs(client); v["list"] != 1 || v["get"] != 0 {
		t.Fatalf("want one list and no get, got %v", v)
	}
	for i, live := range got {
		if (i == 3) != (live != nil) {
			t.Fatalf("object %d: found %v", i, live)
		}
	}
	if got[3].Labels["owner"] != "a" {
		t.Fatalf("the owner's labels are read: %v", got[3].Labels)
	}
}

// A few objects are read one by one, as before: a list of a busy namespace would cost more.
func TestFewObjectsAreReadOneByOne(t *testing.T) {
	scheme := runtime.NewScheme()
	metav1.AddMetaToScheme(scheme)
	client := metadatafake.NewSimpleMetadataClient(scheme, configMap("small", "cm-1", nil))
	got, err := lookUp(context.Background(), configMapMapper(), client, refs("small", listThreshold-1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := verbs(client); v["list"] != 0 || v["get"] != listThreshold-1 {
		t.Fatalf("want a get each, got %v", v)
	}
	if got[1] == nil || got[0] != nil {
		t.Fatalf("found %v", got)
	}
}
