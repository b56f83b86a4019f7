package main

import (
	"reflect"
	"testing"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

func crdObject(versions ...string) map[string]any {
	var vs []any
	for i, v := range versions {
		vs = append(vs, map[string]any{"name": v, "served": true, "storage": i == len(versions)-1})
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.x.example.com"},
		"spec":     map[string]any{"group": "x.example.com", "versions": vs},
	}
}

func TestDiffOfAChartsCrdsOnlyCreatedIsNoneUnlessItComesIntoTheSet(t *testing.T) {
	const key = "apiextensions.k8s.io/CustomResourceDefinition//widgets.x.example.com"
	const added = "apiextensions.k8s.io/CustomResourceDefinition//gadgets.x.example.com"
	old := spec("m:1", map[string]DesiredObject{key: {Manifest: crdObject("v1"), CreateOnly: true, Retain: "a chart's crds/"}})
	news := spec("m:1", map[string]DesiredObject{
		key:   {Manifest: crdObject("v1", "v2"), CreateOnly: true, Retain: "a chart's crds/"},
		added: {Manifest: crdObject("v1"), CreateOnly: true, Retain: "a chart's crds/"},
	})
	if d := diffPair(readyOutputs(old), news); d.Changes || len(d.Detailed) != 0 {
		t.Fatalf("a crds/ change, or one added, under Create is no diff: got %v", d.Detailed)
	}
	// An earlier state, its CRD applied as any object: taking the rule on writes nothing either.
	earlier := spec("m:1", map[string]DesiredObject{key: {Manifest: crdObject("v1"), Retain: "a chart's crds/"}})
	if d := diffPair(readyOutputs(earlier), spec("m:1", map[string]DesiredObject{key: {Manifest: crdObject("v1", "v2"), CreateOnly: true, Retain: "a chart's crds/"}})); d.Changes {
		t.Fatalf("an object becoming create-only is no diff: got %v", d.Detailed)
	}
	// chartCrds: CreateReplace from now on: applied once at least, the cluster may hold any earlier version.
	replaced := spec("m:1", map[string]DesiredObject{key: {Manifest: crdObject("v1"), Retain: "a chart's crds/"}})
	d := diffPair(readyOutputs(old), replaced)
	if want := map[string]pulumirpc.PropertyDiff_Kind{`objects["` + key + `"].createOnly`: pulumirpc.PropertyDiff_UPDATE}; !d.Changes || !reflect.DeepEqual(d.Detailed, want) {
		t.Fatalf("got %v, want %v", d.Detailed, want)
	}
}
