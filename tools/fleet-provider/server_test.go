package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// One provider serves every cluster of a stack: a pair is applied to the cluster its spec names (here
// in render mode, each cluster its own directory), and a name the configuration lacks is an error.
func TestOneProviderAppliesEachPairToTheClusterItNames(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	s := newServer("test")
	args, _ := toStruct(Config{Clusters: map[string]Config{"a": {RenderYamlToDirectory: dirA}, "b": {RenderYamlToDirectory: dirB}}})
	if _, err := s.Configure(context.Background(), &pulumirpc.ConfigureRequest{Args: args}); err != nil {
		t.Fatal(err)
	}
	pair := spec("m:1", map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", nil)}})
	pair.Cluster = "b"
	props, _ := toStruct(pair)
	if _, err := s.Create(context.Background(), &pulumirpc.CreateRequest{Name: "b/r/x", Properties: props}); err != nil {
		t.Fatal(err)
	}
	file := "1-manifest/v1_ConfigMap_app_a.yaml"
	if _, err := os.Stat(filepath.Join(dirB, file)); err != nil {
		t.Fatalf("the pair was not rendered to cluster b: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dirA, file)); err == nil {
		t.Fatal("the pair was rendered to cluster a too")
	}
	pair.Cluster = "c"
	props, _ = toStruct(pair)
	if _, err := s.Create(context.Background(), &pulumirpc.CreateRequest{Name: "c/r/x", Properties: props}); err == nil {
		t.Fatal("a cluster the configuration lacks must be an error")
	}
}

// A prune and a deletion keep exactly the objects whose received policy says so, and say why with the
// received reason; an input whose propagation the provider cannot honour is refused at Check.
func TestTheProviderHonoursTheReceivedDeletePolicy(t *testing.T) {
	dir := t.TempDir()
	s := newServer("test")
	args, _ := toStruct(Config{RenderYamlToDirectory: dir})
	if _, err := s.Configure(context.Background(), &pulumirpc.ConfigureRequest{Args: args}); err != nil {
		t.Fatal(err)
	}
	file := func(name string) string { return filepath.Join(dir, "1-manifest", "v1_ConfigMap_app_"+name+".yaml") }
	exists := func(name string) bool { _, err := os.Stat(file(name)); return err == nil }
	first := spec("m:1", map[string]DesiredObject{
		"/ConfigMap/app/kept": {Manifest: configMap("kept", nil), Retain: "keepResources"},
		"/ConfigMap/app/gone": {Manifest: configMap("gone", nil)},
		"/ConfigMap/app/last": {Manifest: configMap("last", nil)},
	})
	props, _ := toStruct(first)
	created, err := s.Create(context.Background(), &pulumirpc.CreateRequest{Name: "c/r/x", Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	second := spec("m:2", map[string]DesiredObject{"/ConfigMap/app/last": {Manifest: configMap("last", nil)}})
	news, _ := toStruct(second)
	updated, err := s.Update(context.Background(), &pulumirpc.UpdateRequest{Olds: created.GetProperties(), OldInputs: props, News: news})
	if err != nil {
		t.Fatal(err)
	}
	var out Outputs
	if err := fromStruct(updated.GetProperties(), &out); err != nil {
		t.Fatal(err)
	}
	if !exists("kept") || exists("gone") || !exists("last") {
		t.Fatalf("prune: kept %v, gone %v, last %v", exists("kept"), exists("gone"), exists("last"))
	}
	if !reflect.DeepEqual(out.Retained, []string{"/ConfigMap/app/kept: keepResources"}) {
		t.Fatalf("retained: %v", out.Retained)
	}
	if _, err := s.Delete(context.Background(), &pulumirpc.DeleteRequest{Properties: updated.GetProperties(), OldInputs: news}); err != nil {
		t.Fatal(err)
	}
	if exists("last") {
		t.Fatal("deleting the pair removes what no reason keeps")
	}
	bad := spec("m:3", nil)
	bad.DeletePolicy.Propagation = ""
	badProps, _ := toStruct(bad)
	checked, err := s.Check(context.Background(), &pulumirpc.CheckRequest{News: badProps})
	if err != nil || len(checked.GetFailures()) != 1 || checked.GetFailures()[0].GetProperty() != "deletePolicy" {
		t.Fatalf("an empty propagation is refused at Check: %v %v", checked.GetFailures(), err)
	}
}
