package main

import (
	"context"
	"os"
	"path/filepath"
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
	file := "1-manifest/v1-configmap-app-a.yaml"
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
