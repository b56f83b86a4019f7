package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// The digest rule is one in both languages: the fixture's digests are TypeScript's
// (test/unit/content-digest.test.ts holds TypeScript to the same file).
func TestContentDigestIsTypeScriptsOnTheSharedFixture(t *testing.T) {
	raw, err := os.ReadFile("../../test/fixtures/content-digest.json")
	if err != nil {
		t.Fatal(err)
	}
	var fixture struct {
		Objects []struct{ Key, Manifest, Canonical, Digest string }
		Content string
	}
	if err := json.Unmarshal(raw, &fixture); err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	for _, o := range fixture.Objects {
		var d DesiredObject
		if err := json.Unmarshal([]byte(`{"manifest":`+quote(o.Manifest)+`}`), &d); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		writeCanonical(&b, d.Manifest)
		if b.String() != o.Canonical {
			t.Fatalf("%s: canonical JSON\n go: %s\n ts: %s", o.Key, b.String(), o.Canonical)
		}
		if got := objectDigest(d.Manifest); got != o.Digest {
			t.Fatalf("%s: digest %s, TypeScript's %s", o.Key, got, o.Digest)
		}
		digests[o.Key] = o.Digest
	}
	if got := contentDigest(digests); got != fixture.Content {
		t.Fatalf("content digest %s, TypeScript's %s", got, fixture.Content)
	}
}

const contentURNPrefix = "urn:pulumi:s::p::pulumi-fleet:index:Fleet$pulumi-fleet:index:BundleContent::"

// contentPair is a pair in the content form, and its BundleContent's inputs, as the program registers them.
// The manifests carry the pair's owner labels; its content leaves them out.
func contentPair(id string, manifests map[string]map[string]any) (Spec, *structpb.Struct) {
	owner := map[string]string{"fleet.cattle.io/cluster": "c1"}
	objects, texts, digests := map[string]DesiredObject{}, map[string]any{}, map[string]string{}
	for k, m := range manifests {
		raw, _ := json.Marshal(m)
		var shared, full DesiredObject
		_ = json.Unmarshal([]byte(`{"manifest":`+quote(string(raw))+`}`), &shared)
		_ = json.Unmarshal([]byte(`{"manifest":`+quote(string(raw))+`}`), &full)
		withOwnerLabels(full.Manifest, owner)
		digests[k], texts[k] = objectDigest(shared.Manifest), string(raw)
		objects[k] = DesiredObject{APIVersion: m["apiVersion"].(string), Digest: objectDigest(full.Manifest)}
	}
	s := spec(id, objects)
	s.DeletePolicy.OwnerLabels = owner
	s.Content = contentDigest(digests)
	inputs, _ := structpb.NewStruct(map[string]any{"objects": texts})
	return s, inputs
}

func renderServer(t *testing.T) (*server, string) {
	dir := t.TempDir()
	s := newServer("test")
	args, _ := toStruct(Config{RenderYamlToDirectory: dir})
	if _, err := s.Configure(context.Background(), &pulumirpc.ConfigureRequest{Args: args}); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// A content's Check refuses a digest that is not its manifests', and keeps a right one for the pairs
// that name it: their Create takes the manifests from it; a pair whose content was never given fails,
// naming itself and the digest.
func TestContentCheckKeepsTheManifestsAPairAppliesAndRefusesAWrongDigest(t *testing.T) {
	stash = &contents{byDigest: map[string]*content{}}
	s, dir := renderServer(t)
	ctx := context.Background()
	pair, inputs := contentPair("m:1", map[string]map[string]any{"/ConfigMap/app/a": configMap("a", map[string]any{"k": "v"})})
	wrong, _ := s.Check(ctx, &pulumirpc.CheckRequest{Urn: contentURNPrefix + strings.Repeat("0", 64), News: inputs})
	if len(wrong.GetFailures()) != 1 || !strings.Contains(wrong.GetFailures()[0].GetReason(), "its manifests' digest is "+pair.Content) {
		t.Fatalf("a content under another digest must be refused: %v", wrong.GetFailures())
	}
	props, _ := toStruct(pair)
	pairURN := "urn:pulumi:s::p::pulumi-fleet:index:BundleDeployment::c/r/b"
	if _, err := s.Create(ctx, &pulumirpc.CreateRequest{Urn: pairURN, Name: "c/r/b", Properties: props}); err == nil ||
		!strings.Contains(err.Error(), pairURN) || !strings.Contains(err.Error(), pair.Content) {
		t.Fatalf("a pair without its content must fail naming it and the digest: %v", err)
	}
	if ok, _ := s.Check(ctx, &pulumirpc.CheckRequest{Urn: contentURNPrefix + pair.Content, News: inputs}); len(ok.GetFailures()) > 0 {
		t.Fatalf("its own digest: %v", ok.GetFailures())
	}
	if checked, _ := s.Check(ctx, &pulumirpc.CheckRequest{Urn: pairURN, News: props}); len(checked.GetFailures()) > 0 {
		t.Fatalf("a pair in the content form passes Check: %v", checked.GetFailures())
	}
	created, err := s.Create(ctx, &pulumirpc.CreateRequest{Urn: pairURN, Name: "c/r/b", Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(dir, "1-manifest/v1_ConfigMap_app_a.yaml"))
	if err != nil || !strings.Contains(string(text), "k: v") || !strings.Contains(string(text), "fleet.cattle.io/cluster: c1") {
		t.Fatalf("the pair applied its content's manifest: %q %v", text, err)
	}
	// Deleted by its inventory alone: the state's inputs hold no manifest.
	if _, err := s.Delete(ctx, &pulumirpc.DeleteRequest{Urn: pairURN, OldInputs: props, Properties: created.GetProperties()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "1-manifest/v1_ConfigMap_app_a.yaml")); !os.IsNotExist(err) {
		t.Fatalf("the pair's delete removed its object by its inventory: %v", err)
	}
}

// A state written before contents (each object's manifest in the pair's inputs) diffs equal to the
// content form of the same manifests, without the content in the process: the first up after the
// upgrade applies nothing. A changed object is named as changed.
func TestDiffOfTheEarlierFormAgainstTheContentFormComparesDigests(t *testing.T) {
	stash = &contents{byDigest: map[string]*content{}}
	manifests := map[string]map[string]any{"/ConfigMap/app/a": configMap("a", map[string]any{"k": "v"}), "/ConfigMap/app/b": configMap("b", nil)}
	earlier := map[string]DesiredObject{}
	for k, m := range manifests {
		raw, _ := json.Marshal(m)
		var o DesiredObject
		_ = json.Unmarshal([]byte(`{"manifest":`+quote(string(raw))+`,"retain":"kept"}`), &o)
		withOwnerLabels(o.Manifest, map[string]string{"fleet.cattle.io/cluster": "c1"})
		earlier[k] = o
	}
	olds := readyOutputs(spec("m:1", earlier))
	olds.DeletePolicy.OwnerLabels = map[string]string{"fleet.cattle.io/cluster": "c1"}
	news, _ := contentPair("m:1", manifests)
	for k, o := range news.Objects {
		o.Retain = "kept"
		news.Objects[k] = o
	}
	if d := diffPair(olds, news); d.Changes {
		t.Fatalf("the same content in the two forms must diff equal: %v", d.Detailed)
	}
	manifests["/ConfigMap/app/b"] = configMap("b", map[string]any{"new": "x"})
	changed, _ := contentPair("m:1", manifests)
	for k, o := range changed.Objects {
		o.Retain = "kept"
		changed.Objects[k] = o
	}
	d := diffPair(olds, changed)
	if !d.Changes || len(d.Detailed) != 1 || d.Detailed[`objects["/ConfigMap/app/b"].manifest`] != pulumirpc.PropertyDiff_UPDATE {
		t.Fatalf("the changed object alone: %v", d.Detailed)
	}
}

// Prune without the last set's manifests: the inventory and each object's retain decide.
func TestPruneOfAContentSetGoesByItsInventory(t *testing.T) {
	previous := map[string]DesiredObject{"/ConfigMap/app/a": {APIVersion: "v1", Digest: "d1"}, "/ConfigMap/app/kept": {APIVersion: "v1", Digest: "d2", Retain: "keepResources"}}
	inventory := []InventoryID{{Kind: "ConfigMap", Namespace: "app", Name: "a", Version: "v1"}, {Kind: "ConfigMap", Namespace: "app", Name: "kept", Version: "v1"}}
	p := planPrune(inventory, previous, nil)
	if len(p.Delete) != 1 || p.Delete[0].Name != "a" || len(p.Retained) != 1 {
		t.Fatalf("delete a, keep kept: %+v", p)
	}
	if id := previous["/ConfigMap/app/a"].identity("/ConfigMap/app/a"); identityOf(id).Name != "a" || identityOf(id).APIVersion != "v1" {
		t.Fatalf("an object's identity from its key and apiVersion: %v", id)
	}
}

// A refresh without the content (a plain `pulumi refresh`) invents no drift: it checks each object is
// there, says the fields were not compared and what to run; a missing object is drift as always.
func TestARefreshWithoutTheContentChecksPresenceAndSaysSo(t *testing.T) {
	stash = &contents{byDigest: map[string]*content{}, fileOnce: sync.Once{}}
	t.Setenv(contentFileEnv, filepath.Join(t.TempDir(), "none.json"))
	present := &unstructured.Unstructured{Object: configMap("a", map[string]any{"k": "edited by hand"})}
	kube := fake.NewClientBuilder().WithObjects(present).Build()
	rm := managerOn(kube, nil)
	pair, _ := contentPair("m:1", map[string]map[string]any{"/ConfigMap/app/a": configMap("a", map[string]any{"k": "v"})})
	olds := Outputs{Spec: pair, Status: Status{State: StateReady, AppliedDeploymentID: "m:1"}}
	s := newServer("test")
	st, live := s.refreshed(rm, "urn:pulumi:s::p::pulumi-fleet:index:BundleDeployment::c1/r/b", olds)
	if st.State != StateReady || len(live) != 1 || len(st.Messages) != 1 || !strings.Contains(st.Messages[0], "fields not compared") ||
		!strings.Contains(st.Messages[0], pair.Content) || !strings.Contains(st.Messages[0], "npm run up -- --refresh") {
		t.Fatalf("present, not compared, said so: %s %q (%d live)", st.State, st.Messages, len(live))
	}
	pair.Objects["/ConfigMap/app/gone"] = DesiredObject{APIVersion: "v1", Digest: "d"}
	st, _ = s.refreshed(rm, "urn:pulumi:s::p::pulumi-fleet:index:BundleDeployment::c1/r/b", Outputs{Spec: pair, Status: Status{State: StateReady}})
	if st.State != StateModified || len(st.Drifted) != 1 || st.Drifted[0] != "/ConfigMap/app/gone" || st.Messages[0] != "missing ConfigMap app/gone" {
		t.Fatalf("a missing object is drift: %s %q %q", st.State, st.Drifted, st.Messages)
	}
}
