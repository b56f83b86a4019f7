//go:build live

package main

// What the API server refuses, against a real one (an admission policy refusing labelled ConfigMaps
// and Namespaces, as a platform team's policy would): the pair is ErrApplied naming the refused object
// with the server's words, and prunes nothing; a cluster's setup applies each namespace on its own
// (namespaces_apart.go), so a refused one leaves out only what lives in it.

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// denyLabel marks an object the test's admission policy refuses.
const denyLabel = "golive-deny"

const policyWords = "refused by the golive policy"

func TestLiveRefusals(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	refuseLabelled(t, ns)

	t.Run("a refused object fails the pair, which prunes nothing", func(t *testing.T) {
		t.Parallel()
		first := applied(t, live, nil, specOf("r-1", liveConfigMap(ns, "a", map[string]any{"v": "1"}), liveConfigMap(ns, "dropped", map[string]any{"v": "1"})))
		mustBeReady(t, first)

		refused := applied(t, live, first, specOf("r-2", liveConfigMap(ns, "a", map[string]any{"v": "2"}), denied(liveConfigMap(ns, "b", map[string]any{"v": "1"}))))
		msg := strings.Join(refused.Messages, "\n")
		if refused.State != StateErrApplied || !strings.Contains(msg, "ConfigMap/"+ns+"/b") || !strings.Contains(msg, policyWords) {
			t.Fatalf("state %s, messages %q: want ErrApplied naming ConfigMap b with the policy's words", refused.State, refused.Messages)
		}
		if liveObject(t, "v1", "ConfigMap", ns, "dropped") == nil {
			t.Fatal("the object that left the set was pruned by an apply that failed")
		}
		if !inInventory(refused.Inventory, ns, "dropped") {
			t.Fatalf("inventory %v lost the object that left the set: a later prune would never delete it", refused.Inventory)
		}

		allowed := applied(t, live, refused, specOf("r-3", liveConfigMap(ns, "a", map[string]any{"v": "2"}), liveConfigMap(ns, "b", map[string]any{"v": "1"})))
		mustBeReady(t, allowed)
		if liveObject(t, "v1", "ConfigMap", ns, "dropped") != nil || liveObject(t, "v1", "ConfigMap", ns, "b") == nil {
			t.Fatal("once the set is accepted, the dropped ConfigMap must be pruned and b applied")
		}
	})

	t.Run("a setup's refused namespace leaves out only what lives in it", func(t *testing.T) {
		t.Parallel()
		ok, bad := ns+"-ok", ns+"-bad"
		t.Cleanup(func() {
			for _, name := range []string{ok, bad} {
				_ = live.Client().Delete(context.Background(), manifestObject(namespaceManifest(name)))
			}
		})
		setup := specOf("n-1", namespaceManifest(ok), denied(namespaceManifest(bad)),
			liveConfigMap(ok, "agent", map[string]any{"v": "1"}), liveConfigMap(bad, "team", map[string]any{"v": "1"}))
		setup.namespacesApart = true
		o := applied(t, live, nil, setup)
		if o.State != StateErrApplied || !strings.Contains(o.Refused[bad], policyWords) || len(o.Refused) != 1 {
			t.Fatalf("state %s, refused %v: want ErrApplied with namespace %s refused in the policy's words", o.State, o.Refused, bad)
		}
		msg := strings.Join(o.Messages, "\n")
		for _, want := range []string{"namespace " + bad + " was refused by the API server: ", "/ConfigMap/" + bad + "/team not applied: its namespace " + bad + " was refused"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("messages %q do not say %q", o.Messages, want)
			}
		}
		if liveObject(t, "v1", "Namespace", "", ok) == nil || liveObject(t, "v1", "ConfigMap", ok, "agent") == nil {
			t.Fatalf("the accepted namespace %s and its ConfigMap were not applied", ok)
		}
	})
}

// refuseLabelled makes the cluster refuse ConfigMaps and Namespaces carrying denyLabel until the test
// ends, and waits until the API server enforces it (a dry run in probeNamespace is refused).
func refuseLabelled(t *testing.T, probeNamespace string) {
	t.Helper()
	policy := manifestObject(map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": denyLabel},
		"spec": map[string]any{
			"failurePolicy": "Fail",
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE", "UPDATE"}, "resources": []any{"configmaps", "namespaces"},
			}}},
			"validations": []any{map[string]any{"expression": "!has(object.metadata.labels) || !('" + denyLabel + "' in object.metadata.labels)", "message": policyWords}},
		},
	})
	binding := manifestObject(map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
		"metadata": map[string]any{"name": denyLabel},
		"spec":     map[string]any{"policyName": denyLabel, "validationActions": []any{"Deny"}},
	})
	for _, o := range []map[string]any{policy.Object, binding.Object} {
		u := manifestObject(o)
		if err := live.Client().Create(t.Context(), u.DeepCopy()); err != nil {
			t.Fatalf("creating the admission policy: %v", err)
		}
		t.Cleanup(func() { _ = live.Client().Delete(context.Background(), u) })
	}
	probe := manifestObject(denied(liveConfigMap(probeNamespace, "policy-probe", nil)))
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := live.Client().Create(ctx, probe.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), policyWords), nil
	})
	if err != nil {
		t.Fatalf("the admission policy did not take effect: %v", err)
	}
}

// denied labels a manifest so the test's policy refuses it.
func denied(m map[string]any) map[string]any {
	meta := m["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	labels[denyLabel] = "true"
	meta["labels"] = labels
	return m
}

func namespaceManifest(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name, "labels": labelsOf(owner)}}
}

func inInventory(ids []InventoryID, namespace, name string) bool {
	for _, id := range ids {
		if id.Namespace == namespace && id.Name == name {
			return true
		}
	}
	return false
}
