package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"reflect"
	"testing"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

func configMap(name string, data map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "app"}, "data": data}
}

func spec(id string, objects map[string]DesiredObject) Spec {
	return Spec{DeploymentID: id, Objects: objects, DeletePolicy: DeletePolicy{Propagation: "background"}}
}

func readyOutputs(s Spec) *Outputs {
	return &Outputs{Spec: s, Status: Status{AppliedDeploymentID: s.DeploymentID, State: StateReady}}
}

func TestDiffPairUnchangedReadyIsNoChange(t *testing.T) {
	s := spec("m:1", map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", map[string]any{"k": "v"})}})
	if d := diffPair(readyOutputs(s), s); d.Changes {
		t.Fatalf("an unchanged Ready pair must not change: %+v", d)
	}
}

func TestDiffPairNamesChangedFieldsAddedAndRemovedObjects(t *testing.T) {
	old := spec("m:1", map[string]DesiredObject{
		"/ConfigMap/app/a":    {Manifest: configMap("a", map[string]any{"k": "v"})},
		"/ConfigMap/app/gone": {Manifest: configMap("gone", nil)},
	})
	news := spec("m:2", map[string]DesiredObject{
		"/ConfigMap/app/a":   {Manifest: configMap("a", map[string]any{"k": "w"})},
		"/ConfigMap/app/new": {Manifest: configMap("new", nil)},
	})
	d := diffPair(readyOutputs(old), news)
	want := map[string]pulumirpc.PropertyDiff_Kind{
		`objects["/ConfigMap/app/a"].manifest.data.k`: pulumirpc.PropertyDiff_UPDATE,
		`objects["/ConfigMap/app/gone"]`:              pulumirpc.PropertyDiff_DELETE,
		`objects["/ConfigMap/app/new"]`:               pulumirpc.PropertyDiff_ADD,
		`deploymentId`:                                pulumirpc.PropertyDiff_UPDATE,
	}
	if !d.Changes || !reflect.DeepEqual(d.Detailed, want) {
		t.Fatalf("detailed diff:\n got %v\nwant %v", d.Detailed, want)
	}
}

func TestDiffPairRetriesWhatDidNotReachReady(t *testing.T) {
	s := spec("m:1", map[string]DesiredObject{})
	for state, retry := range map[string]bool{StateErrApplied: true, StateNotReady: true, StateWaitApplied: true, StateOutOfSync: true, StateModified: true, StateReady: false} {
		o := readyOutputs(s)
		o.State = state
		if d := diffPair(o, s); d.Changes != retry {
			t.Errorf("state %s: changes %v, want %v (%q)", state, d.Changes, retry, d.Retry)
		}
	}
	failed := readyOutputs(s)
	failed.AppliedDeploymentID = "m:0"
	if d := diffPair(failed, s); !d.Changes || d.Retry == "" {
		t.Fatalf("an applied ID behind the deployment ID must be retried: %+v", d)
	}
	refused := spec("m:1", map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", nil)}, "/ConfigMap/app/b": {Manifest: configMap("b", nil)}})
	again := readyOutputs(refused)
	again.State = StateErrApplied
	if d := diffPair(again, refused); len(d.Detailed) != 2 {
		t.Fatalf("a retry applies every object again, and says so per object: %+v", d.Detailed)
	}
	withObject := spec("m:1", map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", nil)}})
	drifted := readyOutputs(withObject)
	drifted.State, drifted.Drifted = StateModified, []string{"/ConfigMap/app/a"}
	if d := diffPair(drifted, withObject); !d.Changes || d.Detailed[`objects["/ConfigMap/app/a"]`] != pulumirpc.PropertyDiff_UPDATE {
		t.Fatalf("drift found by a refresh is put back, each drifted object an update: %+v", d)
	}
	paused := readyOutputs(s)
	paused.State, paused.Paused = StateErrApplied, true
	s.Paused = true
	if d := diffPair(paused, s); d.Changes {
		t.Fatal("a paused pair is not retried")
	}
}

func TestDiffPairBoundsFieldPaths(t *testing.T) {
	a, b := map[string]any{}, map[string]any{}
	for i := 0; i < maxFieldDiffs+1; i++ {
		b[string(rune('a'+i%26))+string(rune('a'+i/26))] = "x"
	}
	old := spec("m:1", map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", a)}})
	news := spec("m:1", map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", b)}})
	d := diffPair(readyOutputs(old), news)
	if len(d.Detailed) != 1 || d.Detailed[`objects["/ConfigMap/app/a"].manifest`] != pulumirpc.PropertyDiff_UPDATE {
		t.Fatalf("past the bound the object shows as one change: %v", d.Detailed)
	}
}

func TestPlanPruneKeepsRetainedAndWhatStays(t *testing.T) {
	inv := []InventoryID{
		{Kind: "ConfigMap", Namespace: "app", Name: "stays", Version: "v1"},
		{Kind: "ConfigMap", Namespace: "app", Name: "dropped", Version: "v1"},
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "x.example.com", Version: "v1"},
	}
	previous := map[string]DesiredObject{
		"/ConfigMap/app/stays":   {},
		"/ConfigMap/app/dropped": {},
		"apiextensions.k8s.io/CustomResourceDefinition//x.example.com": {Retain: "a chart's crds/ (deleteCRDResources is off)"},
	}
	keep := map[string]DesiredObject{"/ConfigMap/app/stays": {}}
	p := planPrune(inv, previous, keep)
	if len(p.Delete) != 1 || p.Delete[0].Name != "dropped" {
		t.Fatalf("delete: %+v", p.Delete)
	}
	if !reflect.DeepEqual(p.Retained, []string{"apiextensions.k8s.io/CustomResourceDefinition//x.example.com: a chart's crds/ (deleteCRDResources is off)"}) {
		t.Fatalf("retained: %v", p.Retained)
	}
	if all := planPrune(inv, previous, nil); len(all.Delete) != 2 {
		t.Fatalf("deleting the pair deletes all but the retained: %+v", all.Delete)
	}
}

func TestGateMessage(t *testing.T) {
	if m := gateMessage([]Gate{{Name: "c/a", State: StateReady}}); m != "" {
		t.Fatalf("ready gates: %q", m)
	}
	if m := gateMessage([]Gate{{Name: "c/a", State: StateReady}, {Name: "c/b", State: StateErrApplied}, {Name: "c/d"}}); m != "waiting for c/b is ErrApplied, c/d is not deployed" {
		t.Fatalf("message: %q", m)
	}
}

func TestMergeInventoryKeepsUIDsAndAddsTheSet(t *testing.T) {
	before := []InventoryID{{Kind: "ConfigMap", Namespace: "app", Name: "a", Version: "v1", UID: "u1"}}
	applied := []InventoryID{{Kind: "ConfigMap", Namespace: "app", Name: "a", Version: "v1"}, {Kind: "ConfigMap", Namespace: "app", Name: "b", Version: "v1"}}
	got := mergeInventory(before, applied)
	if len(got) != 2 || got[0].UID != "u1" || got[1].Name != "b" {
		t.Fatalf("merged: %+v", got)
	}
}

func TestRenderPathKeepsTheProvidersDirectoriesWithInjectiveNames(t *testing.T) {
	cases := map[string]map[string]any{
		"d/1-manifest/apps~v1_Deployment_simple_hello.yaml": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "hello", "namespace": "simple"}},
		"d/1-manifest/v1_Namespace__simple.yaml":            {"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "simple"}},
		"d/0-crd/apiextensions.k8s.io~v1_CustomResourceDefinition__x.example.com.yaml": {
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "x.example.com"}},
	}
	for want, m := range cases {
		if got := renderPath("d", m); got != want {
			t.Errorf("got %s want %s", got, want)
		}
	}
}

func TestSpecRefusesAManifestUnderAnotherKey(t *testing.T) {
	s := spec("m", map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("b", nil)}})
	if _, err := s.unstructuredObjects(); err == nil {
		t.Fatal("a manifest under another object's key must be refused")
	}
}

func TestAdoptedObjectsAreTheNewPairsInventory(t *testing.T) {
	s := spec("m:1", map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", nil)}})
	if prev, err := adopted(s); err != nil || prev != nil {
		t.Fatalf("nothing to adopt: %v %v", prev, err)
	}
	s.Adopt = map[string]DesiredObject{
		"/ConfigMap/app/a":    {Manifest: configMap("a", nil)},
		"/ConfigMap/app/old":  {Manifest: configMap("old", nil)},
		"/ConfigMap/app/kept": {Manifest: configMap("kept", nil), Retain: "keepResources"},
	}
	prev, err := adopted(s)
	if err != nil || len(prev.Inventory) != 3 {
		t.Fatalf("adopted: %+v %v", prev, err)
	}
	p := planPrune(prev.Inventory, prev.Objects, s.Objects)
	if len(p.Delete) != 1 || p.Delete[0].Name != "old" || len(p.Retained) != 1 {
		t.Fatalf("the first apply prunes what the set dropped, under the adopted retain rules: %+v", p)
	}
	old := readyOutputs(s)
	news := s
	news.Adopt = nil
	if d := diffPair(old, news); d.Changes {
		t.Fatalf("adopt is read by Create only, never diffed: %+v", d)
	}
}

func TestFromStructReadsSecretsAsTheirValues(t *testing.T) {
	s, err := toStruct(map[string]any{"kubeconfig": map[string]any{sigKey: secretSig, "value": "apiVersion: v1"}, "context": "c"})
	if err != nil {
		t.Fatal(err)
	}
	var cfg Config
	if err := fromStruct(s, &cfg); err != nil || cfg.Kubeconfig != "apiVersion: v1" || cfg.Context != "c" {
		t.Fatalf("config %+v, %v", cfg, err)
	}
}

func TestAwaitedKindsAreTheKubernetesProvidersAwaiters(t *testing.T) {
	for _, k := range [][2]string{{"apps", "Deployment"}, {"batch", "Job"}, {"", "PersistentVolumeClaim"}, {"", "Service"}} {
		if !isAwaited(k[0], k[1]) {
			t.Errorf("%v must be awaited", k)
		}
	}
	for _, k := range [][2]string{{"", "ConfigMap"}, {"example.com", "Widget"}, {"", "Namespace"}} {
		if isAwaited(k[0], k[1]) {
			t.Errorf("%v must not be awaited", k)
		}
	}
}

func TestUnreachableIsNoAnswerNotARefusal(t *testing.T) {
	noAnswer := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	if !unreachable(fmt.Errorf("deleting: %w", noAnswer)) {
		t.Fatal("a dial error is unreachable")
	}
	if unreachable(errors.New(`configmaps "a" is forbidden: User "x" cannot delete resource`)) {
		t.Fatal("a refusal is an answer")
	}
}

// A refused apply adds to the inventory only what exists: an object the server refused (no UID read
// back) is not the pair's to delete later.
func TestExistingKeepsWhatWasReadBack(t *testing.T) {
	got := existing([]InventoryID{{Kind: "ConfigMap", Namespace: "ns", Name: "made", UID: "u1"}, {Kind: "ClusterRoleBinding", Name: "refused"}})
	if len(got) != 1 || got[0].Name != "made" {
		t.Fatalf("existing = %+v, want only the object with a UID", got)
	}
}

// A secret object (the agent's token) is diffed under its own property, which the engine keeps secret,
// and is part of the set that is applied and pruned.
func TestSecretObjectsAreDiffedApartAndPartOfTheSet(t *testing.T) {
	secret := func(token string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "app"}, "stringData": map[string]any{"token": token}}
	}
	old := spec("m:1", map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", nil)}})
	old.SecretObjects = map[string]DesiredObject{"/Secret/app/s": {Manifest: secret("one")}}
	news := old
	news.SecretObjects = map[string]DesiredObject{"/Secret/app/s": {Manifest: secret("two")}}
	d := diffPair(readyOutputs(old), news)
	want := map[string]pulumirpc.PropertyDiff_Kind{`secretObjects["/Secret/app/s"].manifest.stringData.token`: pulumirpc.PropertyDiff_UPDATE}
	if !reflect.DeepEqual(d.Detailed, want) {
		t.Fatalf("detailed diff:\n got %v\nwant %v", d.Detailed, want)
	}
	objs, err := news.unstructuredObjects()
	if err != nil || len(objs) != 2 {
		t.Fatalf("the set is objects and secretObjects: %d objects, %v", len(objs), err)
	}
}

// A message quoting a secret object's value (an API server's refusal may) carries [secret] instead.
func TestMessagesNeverQuoteASecretObjectsValues(t *testing.T) {
	s := spec("m:1", nil)
	s.SecretObjects = map[string]DesiredObject{"/Secret/app/s": {Manifest: map[string]any{"stringData": map[string]any{"token": "t0ken-value"}}}}
	got := redacted([]string{`Secret app/s: token "t0ken-value" (dDBrZW4tdmFsdWU=) refused`}, s.secretValues())
	if want := `Secret app/s: token "[secret]" ([secret]) refused`; got[0] != want {
		t.Fatalf("got %q, want %q", got[0], want)
	}
}

func TestOutputsKeepNoCopyOfTheSetAndThePreviousSpecComesFromTheInputs(t *testing.T) {
	spec := Spec{DeploymentID: "d1", Objects: map[string]DesiredObject{"/ConfigMap/ns/a": {Manifest: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}}}
	out, err := toStruct(recorded(Outputs{Spec: spec, Status: Status{AppliedDeploymentID: "d1", State: StateReady}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.GetFields()["objects"]; ok {
		t.Fatalf("outputs hold the objects: %v", out)
	}
	in, err := toStruct(spec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pairState(in, out)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != StateReady || len(got.Objects) != 1 || got.DeploymentID != "d1" {
		t.Fatalf("pairState: %+v", got)
	}
	if d := diffPair(&got, spec); d.Changes {
		t.Fatalf("an unchanged pair read back from its inputs and outputs differs: %+v", d)
	}
}

func TestAManifestAsJSONTextIsTheSameObjectAsItsTree(t *testing.T) {
	tree := []byte(`{"manifest":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"n":"1"},"spec":{"replicas":3}},"retain":"keepResources"}`)
	text := []byte(`{"manifest":"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"},\"data\":{\"n\":\"1\"},\"spec\":{\"replicas\":3}}","retain":"keepResources"}`)
	var a, b DesiredObject
	if err := json.Unmarshal(tree, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(text, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) || b.Retain != "keepResources" {
		t.Fatalf("tree %+v, text %+v", a, b)
	}
	if _, ok := b.Manifest["spec"].(map[string]any)["replicas"].(json.Number); !ok {
		t.Fatalf("a number is not kept as json.Number: %T", b.Manifest["spec"].(map[string]any)["replicas"])
	}
	old := Outputs{Spec: Spec{DeploymentID: "d", Objects: map[string]DesiredObject{"/ConfigMap//a": a}}, Status: Status{AppliedDeploymentID: "d", State: StateReady}}
	if d := diffPair(&old, Spec{DeploymentID: "d", Objects: map[string]DesiredObject{"/ConfigMap//a": b}}); d.Changes {
		t.Fatalf("an object registered as text differs from the same object as a tree: %+v", d)
	}
}

// The reason a prune keeps an object is core's words (core/desired/delete-policy.ts): rewording it is
// no change of the pair, so a stack deployed with other words sees no diff; keeping or not is one.
func TestDiffPairTellsRetainedFromDeletedNotOneReasonFromAnother(t *testing.T) {
	withReason := func(reason string) Spec {
		return spec("m:1", map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", nil), Retain: reason}})
	}
	if d := diffPair(readyOutputs(withReason("helm.sh/resource-policy: keep")), withReason("a CRD: kept unless ...")); d.Changes {
		t.Fatalf("a reworded reason is no change: %v", d.Detailed)
	}
	d := diffPair(readyOutputs(withReason("")), withReason("keepResources"))
	if !d.Changes || d.Detailed[`objects["/ConfigMap/app/a"].retain`] != pulumirpc.PropertyDiff_UPDATE {
		t.Fatalf("an object a prune now keeps is a change: %v", d.Detailed)
	}
}

// The provider deletes with the propagation it receives and has none of its own.
func TestPropagationIsTheReceivedOneOrRefused(t *testing.T) {
	for in, want := range map[string]string{"background": "Background", "foreground": "Foreground", "orphan": "Orphan"} {
		if got, err := propagation(in); err != nil || string(got) != want {
			t.Fatalf("%s: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "Background", "cascade"} {
		if _, err := propagation(in); err == nil {
			t.Fatalf("%q must be refused, not defaulted", in)
		}
	}
}

// A dependsOn pair held at its gate in one `up` (WaitApplied, nothing applied) and let through in the
// next: only waitFor changed, yet every object is applied now, and the update must name them.
func TestDiffPairNamesTheObjectsAGateHeldBack(t *testing.T) {
	objects := map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", nil)}, "/ConfigMap/app/b": {Manifest: configMap("b", nil)}}
	held := spec("m:1", objects)
	held.WaitFor = []Gate{{Name: "c/r/dep", State: StateNotReady}}
	olds := &Outputs{Spec: held, Status: Status{State: StateWaitApplied, Inventory: []InventoryID{}}}
	news := spec("m:1", objects)
	news.WaitFor = []Gate{{Name: "c/r/dep", State: StateReady}}
	want := map[string]pulumirpc.PropertyDiff_Kind{
		"waitFor":                     pulumirpc.PropertyDiff_UPDATE,
		`objects["/ConfigMap/app/a"]`: pulumirpc.PropertyDiff_ADD,
		`objects["/ConfigMap/app/b"]`: pulumirpc.PropertyDiff_ADD,
	}
	if d := diffPair(olds, news); !d.Changes || !reflect.DeepEqual(d.Detailed, want) {
		t.Fatalf("first apply after the gate opened:\n got %v\nwant %v", d.Detailed, want)
	}
	// Applied at m:1 before, held while m:2 came: what it holds is updated, what is new created, a changed field named once.
	olds.AppliedDeploymentID = "m:1"
	olds.Inventory = []InventoryID{{Kind: "ConfigMap", Namespace: "app", Name: "a", Version: "v1"}}
	news.DeploymentID = "m:2"
	news.Objects = map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", nil)}, "/ConfigMap/app/b": {Manifest: configMap("b", map[string]any{"k": "v"})}}
	want = map[string]pulumirpc.PropertyDiff_Kind{
		"waitFor": pulumirpc.PropertyDiff_UPDATE, "deploymentId": pulumirpc.PropertyDiff_UPDATE,
		`objects["/ConfigMap/app/a"]`:                 pulumirpc.PropertyDiff_UPDATE,
		`objects["/ConfigMap/app/b"].manifest.data.k`: pulumirpc.PropertyDiff_ADD,
	}
	if d := diffPair(olds, news); !reflect.DeepEqual(d.Detailed, want) {
		t.Fatalf("held across a new deploymentId:\n got %v\nwant %v", d.Detailed, want)
	}
	// A Ready pair whose gate input changed (names only): nothing of it is applied anew.
	ready := readyOutputs(held)
	ready.Inventory = []InventoryID{{Kind: "ConfigMap", Namespace: "app", Name: "a", Version: "v1"}}
	readyNews := spec("m:1", objects)
	readyNews.WaitFor = []Gate{{Name: "c/r/dep", State: StateReady}}
	if d := diffPair(ready, readyNews); !reflect.DeepEqual(d.Detailed, map[string]pulumirpc.PropertyDiff_Kind{"waitFor": pulumirpc.PropertyDiff_UPDATE}) {
		t.Fatalf("a Ready pair names no held object: %v", d.Detailed)
	}
}

// A pair resumed (a paused cluster's, a Stalled one) whose last apply was refused is applied again whole,
// each object named (a deploy event); one that was Ready when paused names only the flag.
func TestDiffPairResumedAfterAFailureAppliesEveryObjectAgain(t *testing.T) {
	objects := map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", nil)}, "/ConfigMap/app/b": {Manifest: configMap("b", nil)}}
	was := spec("m:2", objects)
	was.Paused = true
	olds := &Outputs{Spec: was, Status: Status{AppliedDeploymentID: "m:1", State: StateErrApplied}}
	want := map[string]pulumirpc.PropertyDiff_Kind{
		"paused":                      pulumirpc.PropertyDiff_UPDATE,
		`objects["/ConfigMap/app/a"]`: pulumirpc.PropertyDiff_UPDATE,
		`objects["/ConfigMap/app/b"]`: pulumirpc.PropertyDiff_UPDATE,
	}
	if d := diffPair(olds, spec("m:2", objects)); !d.Changes || !reflect.DeepEqual(d.Detailed, want) {
		t.Fatalf("resumed after a refusal:\n got %v\nwant %v", d.Detailed, want)
	}
	ready := readyOutputs(was)
	if d := diffPair(ready, spec("m:2", objects)); !reflect.DeepEqual(d.Detailed, map[string]pulumirpc.PropertyDiff_Kind{"paused": pulumirpc.PropertyDiff_UPDATE}) {
		t.Fatalf("resumed while Ready: only the flag: %v", d.Detailed)
	}
}
