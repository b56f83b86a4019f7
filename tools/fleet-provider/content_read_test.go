package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// A presence-only refresh of a pair a full comparison found Modified keeps it Modified: every object
// is there, but the fields were not compared, so the drift recorded cannot have been cleared. A second
// such refresh says so once, not once per refresh.
func TestARefreshWithoutTheContentKeepsTheDriftRecorded(t *testing.T) {
	stash = &contents{byDigest: map[string]*content{}, fileOnce: sync.Once{}}
	t.Setenv(contentFileEnv, filepath.Join(t.TempDir(), "none.json"))
	present := &unstructured.Unstructured{Object: configMap("a", map[string]any{"k": "edited by hand"})}
	rm := managerOn(fake.NewClientBuilder().WithObjects(present).Build(), nil)
	pair, _ := contentPair("m:1", map[string]map[string]any{"/ConfigMap/app/a": configMap("a", map[string]any{"k": "v"})})
	olds := Outputs{Spec: pair, Status: Status{State: StateModified, Drifted: []string{"/ConfigMap/app/a"}, Messages: []string{"modified ConfigMap app/a"}}}
	s := newServer("test")
	urn := "urn:pulumi:s::p::pulumi-fleet:index:BundleDeployment::c1/r/b"
	for i := 0; i < 2; i++ {
		st, _ := s.refreshed(rm, urn, olds)
		if st.State != StateModified || strings.Join(st.Drifted, ",") != "/ConfigMap/app/a" || len(st.Messages) != 2 ||
			st.Messages[0] != "modified ConfigMap app/a" || !strings.HasPrefix(st.Messages[1], notComparedLead) {
			t.Fatalf("refresh %d: the drift recorded stays: %s %q %q", i+1, st.State, st.Drifted, st.Messages)
		}
		olds.Status = st
	}
}

// A missing object is drift on top of what was recorded: both are named, each once.
func TestPresenceOnlyAddsMissingObjectsToTheDriftRecorded(t *testing.T) {
	prev := Status{State: StateModified, Drifted: []string{"/ConfigMap/app/a", "/ConfigMap/app/gone"}, Messages: []string{"modified ConfigMap app/a", "missing ConfigMap app/gone", notComparedLead + "x"}}
	st := presenceOnly(prev, []string{"missing ConfigMap app/gone"}, []string{"/ConfigMap/app/gone"}, nil, notComparedLead+"y")
	if st.State != StateModified || strings.Join(st.Drifted, ",") != "/ConfigMap/app/gone,/ConfigMap/app/a" ||
		strings.Join(st.Messages, "|") != "missing ConfigMap app/gone|modified ConfigMap app/a|"+notComparedLead+"y" {
		t.Fatalf("missing and recorded drift: %s %q %q", st.State, st.Drifted, st.Messages)
	}
	ready := presenceOnly(Status{State: StateReady}, nil, nil, []string{"Deployment app/d: not ready"}, notComparedLead+"y")
	if ready.State != StateNotReady || ready.Drifted != nil {
		t.Fatalf("a Ready pair with an unhealthy object is NotReady: %s %q", ready.State, ready.Drifted)
	}
}

// One bad content in the hand-over file is its own pairs' failure: every other content still loads
// (its pairs compare fields), and a pair of the bad one says that content's error, not that it was not given.
func TestOneBadHandedOverContentIsItsOwnPairsFailure(t *testing.T) {
	stash = &contents{byDigest: map[string]*content{}, fileOnce: sync.Once{}}
	handover := map[string]any{}
	var good []Spec
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("a%d", i)
		pair, inputs := contentPair("m:1", map[string]map[string]any{"/ConfigMap/app/" + name: configMap(name, map[string]any{"k": "v"})})
		handover[pair.Content] = inputs.AsMap()["objects"]
		good = append(good, pair)
	}
	bad, _ := contentPair("m:1", map[string]map[string]any{"/ConfigMap/app/b": configMap("b", map[string]any{"k": "v"})})
	handover[bad.Content] = map[string]any{"/ConfigMap/app/b": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"app"},"data":{"k":"changed"}}`}
	raw, _ := json.Marshal(handover)
	path := filepath.Join(t.TempDir(), "contents.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(contentFileEnv, path)
	rm := managerOn(fake.NewClientBuilder().Build(), nil)
	s := newServer("test")
	for _, pair := range good {
		st, _ := s.refreshed(rm, "urn:pulumi:s::p::pulumi-fleet:index:BundleDeployment::c1/r/b", Outputs{Spec: pair, Status: Status{State: StateReady}})
		if strings.Contains(strings.Join(st.Messages, "\n"), notComparedLead) {
			t.Fatalf("a good content's pair compared only presence: %q", st.Messages)
		}
	}
	st, _ := s.refreshed(rm, "urn:pulumi:s::p::pulumi-fleet:index:BundleDeployment::c1/r/b", Outputs{Spec: bad, Status: Status{State: StateReady}})
	said := strings.Join(st.Messages, "\n")
	if !strings.Contains(said, "its manifests' digest is") || !strings.Contains(said, bad.Content) || strings.Contains(said, "not given") {
		t.Fatalf("the bad content's pair says its content's error: %q", st.Messages)
	}
}
