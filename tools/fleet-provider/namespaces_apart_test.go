package main

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func namespaceObject(name string) DesiredObject {
	return DesiredObject{Manifest: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
}

func secretIn(namespace, name string) DesiredObject {
	return DesiredObject{Manifest: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name, "namespace": namespace}, "data": map[string]any{"k": "dmFsdWU="}}}
}

// A setup whose one namespace the API server refuses (here an admission webhook's words, through an
// interceptor) creates its other namespaces and the objects outside the refused one, reports the
// refusal by namespace for the pairs that need it, and retries it on the next update.
func TestASetupAppliesEachNamespaceApart(t *testing.T) {
	refusal := `admission webhook "deny.example.com" denied the request: namespace team-a is not allowed`
	kube := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if obj.GetObjectKind().GroupVersionKind().Kind == "Namespace" && obj.GetName() == "team-a" {
				return errors.New(refusal)
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	}).Build()
	rm := ssa.NewResourceManager(kube, nil, ssa.Owner{Field: fieldManager, Group: "fleet.cattle.io"})
	s := spec("setup-1", map[string]DesiredObject{
		"/Namespace//team-a": namespaceObject("team-a"),
		"/Namespace//team-b": namespaceObject("team-b"),
		"/Namespace//agent":  namespaceObject("agent"),
	})
	s.SecretObjects = map[string]DesiredObject{"/Secret/team-a/ops": secretIn("team-a", "ops"), "/Secret/agent/token": secretIn("agent", "token")}
	s.namespacesApart = true
	st := applyPair(context.Background(), rm, nil, s, false)

	if len(st.Refused) != 1 || !strings.Contains(st.Refused["team-a"], refusal) {
		t.Fatalf("refused: %v", st.Refused)
	}
	for _, name := range []string{"team-b", "agent"} {
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		if err := kube.Get(context.Background(), client.ObjectKey{Name: name}, ns); err != nil {
			t.Fatalf("namespace %s was not created beside the refused one: %v", name, err)
		}
	}
	token := &unstructured.Unstructured{}
	token.SetAPIVersion("v1")
	token.SetKind("Secret")
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: "agent", Name: "token"}, token); err != nil {
		t.Fatalf("the agent's Secret waited on the refused namespace: %v", err)
	}
	// The operator's Secret in the refused namespace is the setup's own failure, named with its namespace.
	if st.State != StateErrApplied || len(st.Messages) != 2 || !strings.Contains(st.Messages[0], "/Secret/team-a/ops not applied: its namespace team-a was refused") ||
		st.Messages[1] != "namespace team-a was refused by the API server: "+st.Refused["team-a"] {
		t.Fatalf("state %s messages %q", st.State, st.Messages)
	}
	for _, id := range st.Inventory {
		if id.Namespace == "team-a" || id.Name == "team-a" {
			t.Fatalf("the inventory holds %s, which was never created", id.Key())
		}
	}
	if r := retryReason(st, s); r == "" {
		t.Fatal("a setup with a refused namespace must be applied again on the next update")
	}
	// Nothing of the set is pruned for the refusal: the refused namespace is still in the set.
	if p := planPrune([]InventoryID{{Kind: "Namespace", Name: "team-a"}}, nil, s.set()); len(p.Delete) != 0 {
		t.Fatalf("a refused namespace was pruned: %v", p.Delete)
	}
}

// A setup without refusals is Ready and says nothing of refusals; a BundleDeployment's namespaces are
// its own set's, applied with it (only a setup applies them apart).
func TestOnlyASetupAppliesNamespacesApart(t *testing.T) {
	if !isSetupURN("urn:pulumi:s::p::pulumi-fleet:index:Fleet$pulumi-fleet:index:Cluster$pulumi-fleet:index:ClusterSetup::c1") ||
		!isSetupURN("urn:pulumi:s::p::pulumi-fleet:index:ClusterSetup::c1") {
		t.Fatal("a setup's URN")
	}
	if isSetupURN("urn:pulumi:s::p::pulumi-fleet:index:GitRepo$pulumi-fleet:index:BundleDeployment::c1/r/ClusterSetup::x") || isSetupURN("") {
		t.Fatal("not a setup")
	}
	kube := fake.NewClientBuilder().Build()
	rm := ssa.NewResourceManager(kube, nil, ssa.Owner{Field: fieldManager, Group: "fleet.cattle.io"})
	s := spec("setup-1", map[string]DesiredObject{"/Namespace//team-b": namespaceObject("team-b")})
	s.namespacesApart = true
	if st := applyPair(context.Background(), rm, nil, s, false); st.State != StateReady || st.Refused != nil || len(st.Inventory) != 1 {
		t.Fatalf("%+v", st)
	}
}

// A pair that needs a refused namespace fails with it, named with the server's words, and applies
// nothing (no cluster is touched: the manager is nil); a change of its refusals is a change of the pair.
func TestAPairFailsWithTheNamespaceItNeeds(t *testing.T) {
	s := spec("m:1", map[string]DesiredObject{"/ConfigMap/team-a/a": {Manifest: configMap("a", nil)}})
	s.NamespacesRefused = map[string]string{"team-a": "denied"}
	st := applyPair(context.Background(), nil, nil, s, false)
	if st.State != StateErrApplied || !reflect.DeepEqual(st.Messages, []string{"namespace team-a was refused by the API server, so nothing was applied: denied"}) {
		t.Fatalf("%+v", st)
	}
	ready := readyOutputs(spec("m:1", s.Objects))
	if d := diffPair(ready, s); d.Detailed["namespacesRefused"] == 0 || !d.Changes {
		t.Fatalf("a refusal must change the pair: %+v", d)
	}
}

// A setup's preview keeps the messages its last apply left, known: the pairs on its cluster read their
// refused namespaces there and would all show as changing if they were unknown. A pair's preview adds nothing.
func TestASetupsPreviewKeepsItsMessages(t *testing.T) {
	inputs, _ := toStruct(spec("setup-2", nil))
	setupURN := "urn:pulumi:s::p::pulumi-fleet:index:Cluster$pulumi-fleet:index:ClusterSetup::c1"
	out := previewOutputs(inputs, setupURN, []string{"namespace team-a was refused by the API server: denied"}).AsMap()
	if !reflect.DeepEqual(out["messages"], []any{"namespace team-a was refused by the API server: denied"}) {
		t.Fatalf("%v", out["messages"])
	}
	if created := previewOutputs(inputs, setupURN, nil).AsMap(); !reflect.DeepEqual(created["messages"], []any{}) {
		t.Fatalf("a new setup's preview: %v", created["messages"])
	}
	if _, ok := previewOutputs(inputs, "urn:pulumi:s::p::pulumi-fleet:index:BundleDeployment::c1/r/b", nil).AsMap()["messages"]; ok {
		t.Fatal("a pair's preview messages are unknown, as before")
	}
}

// A refresh replaces a setup's messages with what drifted; its refused namespaces stay in them, so the
// pairs that need them still fail with them after `up --refresh`.
func TestARefreshKeepsASetupsRefusals(t *testing.T) {
	kube := fake.NewClientBuilder().Build()
	rm := ssa.NewResourceManager(kube, nil, ssa.Owner{Field: fieldManager, Group: "fleet.cattle.io"})
	s := spec("setup-1", map[string]DesiredObject{"/Namespace//team-a": namespaceObject("team-a")})
	olds := Outputs{Spec: s, Status: Status{State: StateReady, AppliedDeploymentID: "setup-1", Refused: map[string]string{"team-a": "denied"}}}
	st, _ := driftOf(context.Background(), rm, olds)
	if st.State != StateModified || st.Messages[len(st.Messages)-1] != "namespace team-a was refused by the API server: denied" {
		t.Fatalf("%s %q", st.State, st.Messages)
	}
}
