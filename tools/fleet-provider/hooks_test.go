package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func hookOf(t *testing.T, kind, name string, weight int, events ...string) Hook {
	t.Helper()
	m, err := json.Marshal(map[string]any{"apiVersion": "batch/v1", "kind": kind, "metadata": map[string]any{"name": name, "namespace": "web"}})
	if err != nil {
		t.Fatal(err)
	}
	return Hook{Events: events, Weight: weight, Manifest: string(m)}
}

func TestPhaseHooksRunByWeightThenNameKeepingTheReleaseOrderOtherwise(t *testing.T) {
	hooks := []Hook{
		hookOf(t, "Job", "b", 0, hookPreInstall),
		hookOf(t, "Job", "a", 5, hookPreInstall, hookPreUpgrade),
		hookOf(t, "Job", "c", -1, hookPostInstall),
		hookOf(t, "Job", "a", 0, hookPreInstall),
		hookOf(t, "Secret", "z", -5, hookPreInstall),
	}
	got, err := phaseHooks(hooks, hookPreInstall)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range got {
		names = append(names, h.name())
	}
	want := []string{"Secret web/z", "Job web/a", "Job web/b", "Job web/a"}
	if len(names) != len(want) {
		t.Fatalf("got %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("got %v, want %v", names, want)
		}
	}
	if got[1].Weight != 0 || got[3].Weight != 5 {
		t.Fatalf("weights: got %d and %d", got[1].Weight, got[3].Weight)
	}
	if none, _ := phaseHooks(hooks, hookPreDelete); len(none) != 0 {
		t.Fatalf("pre-delete: got %d hooks", len(none))
	}
}

func TestHookDeletePolicyDefaultsToBeforeHookCreation(t *testing.T) {
	h := hookRun{Hook: Hook{}}
	if !h.policy(hookBeforeCreation) || h.policy(hookSucceeded) {
		t.Fatal("no policy: before-hook-creation only, as Helm")
	}
	h.DeletePolicies = []string{hookSucceeded}
	if h.policy(hookBeforeCreation) || !h.policy(hookSucceeded) {
		t.Fatal("a policy given replaces the default")
	}
}

func TestHookStatusAsHelmsReadersJudgeJobsAndPods(t *testing.T) {
	job := func(status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"kind": "Job", "metadata": map[string]any{"name": "j"}, "spec": map[string]any{"completions": int64(2)}, "status": status}}
	}
	cases := []struct {
		obj           *unstructured.Unstructured
		status, words string
	}{
		{job(map[string]any{}), "InProgress", "Job in progress"},
		{job(map[string]any{"succeeded": int64(2), "conditions": []any{map[string]any{"type": "Complete", "status": "True"}}}), "Current", "Job Completed. succeeded: 2/2"},
		{job(map[string]any{"failed": int64(1), "conditions": []any{map[string]any{"type": "Failed", "status": "True"}}}), "Failed", "Job Failed. failed: 1/2"},
		{job(map[string]any{"conditions": []any{map[string]any{"type": "Failed", "status": "False"}}}), "InProgress", "Job in progress"},
		{&unstructured.Unstructured{Object: map[string]any{"kind": "Pod", "metadata": map[string]any{"name": "p"}, "status": map[string]any{"phase": "Succeeded"}}}, "Current", "pod p succeeded"},
		{&unstructured.Unstructured{Object: map[string]any{"kind": "Pod", "metadata": map[string]any{"name": "p"}, "status": map[string]any{"phase": "Failed"}}}, "Failed", "pod p failed"},
		{&unstructured.Unstructured{Object: map[string]any{"kind": "Pod", "metadata": map[string]any{"name": "p"}, "status": map[string]any{"phase": "Running"}}}, "InProgress", "Pod in progress"},
	}
	for i, c := range cases {
		if s, w := hookStatus(c.obj); s != c.status || w != c.words {
			t.Errorf("case %d: got %s %q, want %s %q", i, s, w, c.status, c.words)
		}
	}
}

func TestHooksRunOncePerReleaseAsInstallThenUpgrade(t *testing.T) {
	spec := Spec{DeploymentID: "d2", Hooks: []Hook{{Events: []string{hookPreUpgrade}}}}
	if !hooksDue(Status{HooksRunFor: "d1"}, spec) || hooksDue(Status{HooksRunFor: "d2"}, spec) {
		t.Fatal("hooks run for a deploymentID whose hooks have not all run, and only then")
	}
	if hooksDue(Status{}, Spec{DeploymentID: "d2"}) {
		t.Fatal("a pair without hooks runs none")
	}
	if pre, post, _, _ := hookEvents(Status{}); pre != hookPreInstall || post != hookPostInstall {
		t.Fatalf("never applied: an install, got %s/%s", pre, post)
	}
	if pre, post, _, _ := hookEvents(Status{Revision: 3}); pre != hookPreUpgrade || post != hookPostUpgrade {
		t.Fatalf("applied before: an upgrade, got %s/%s", pre, post)
	}
	if pre, _, _, _ := hookEvents(Status{Released: true}); pre != hookPreUpgrade {
		t.Fatalf("a failed install is retried as an upgrade (Helm finds the failed release), got %s", pre)
	}
	// An earlier version's pair (hooks applied as objects, no mark): hooks run at its next new deploymentID only.
	earlier := Status{Revision: 2, AppliedDeploymentID: "d2", Inventory: []InventoryID{{Kind: "ConfigMap", Name: "a"}}}
	if hooksDue(earlier, spec) {
		t.Fatal("an earlier version's pair at the same deploymentID runs no hook")
	}
	if !hooksDue(earlier, Spec{DeploymentID: "d3", Hooks: spec.Hooks}) {
		t.Fatal("an earlier version's pair at a new deploymentID runs its hooks")
	}
	if hooksDue(Status{Inventory: earlier.Inventory}, spec) {
		t.Fatal("a pair taken over from per-object resources runs no hook at its takeover")
	}
	if !hooksDue(Status{Released: true, Revision: 1, AppliedDeploymentID: "d2"}, spec) {
		t.Fatal("a release whose post hooks failed (applied, hooks not all run) runs them again")
	}
}

func TestRenderModeWritesHooksApartByEventAndRemovesThoseGone(t *testing.T) {
	dir := t.TempDir()
	migrate := hookOf(t, "Job", "migrate", 0, hookPreInstall, hookPreUpgrade)
	goodbye := hookOf(t, "Job", "goodbye", 0, hookPreDelete)
	if err := renderHooks(dir, nil, []Hook{migrate, goodbye}); err != nil {
		t.Fatal(err)
	}
	files := func() []string {
		var out []string
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, _ error) error {
			if !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				out = append(out, rel)
			}
			return nil
		})
		sort.Strings(out)
		return out
	}
	got := files()
	if len(got) != 3 || !strings.HasPrefix(got[0], "hooks/pre-delete/1-manifest/") || !strings.HasPrefix(got[1], "hooks/pre-install/1-manifest/") || !strings.HasPrefix(got[2], "hooks/pre-upgrade/1-manifest/") {
		t.Fatalf("got %v: want each hook under hooks/<event>/, once per event", got)
	}
	if err := renderHooks(dir, []Hook{migrate, goodbye}, []Hook{migrate}); err != nil {
		t.Fatal(err)
	}
	if got := files(); len(got) != 2 || strings.Contains(strings.Join(got, " "), "pre-delete") {
		t.Fatalf("got %v: the dropped hook's file is removed", got)
	}
	unrenderPair(dir, Outputs{Spec: Spec{Hooks: []Hook{migrate}}})
	if got := files(); len(got) != 0 {
		t.Fatalf("got %v: a deleted pair's hook files go with it", got)
	}
}

func TestObjectsThatAreHooksNowAreNotPruned(t *testing.T) {
	h := hookOf(t, "Job", "migrate", 0, hookPreUpgrade)
	previous := map[string]DesiredObject{"batch/Job/web/migrate": {}, "/ConfigMap/web/gone": {}}
	p := planPrune([]InventoryID{
		{Group: "batch", Kind: "Job", Namespace: "web", Name: "migrate"},
		{Kind: "ConfigMap", Namespace: "web", Name: "gone"},
	}, withHooksKept(previous, []Hook{h}), nil)
	if len(p.Delete) != 1 || p.Delete[0].Name != "gone" {
		t.Fatalf("only the object that left the set is deleted, got %v", p.Delete)
	}
	if len(p.Retained) != 1 || p.Retained[0] != "batch/Job/web/migrate: a Helm hook now, which Helm never deletes with its release" {
		t.Fatalf("the former object, a hook now, is retained: got %v", p.Retained)
	}
	if previous["batch/Job/web/migrate"].Retain != "" {
		t.Fatal("the last set's objects are not changed in place")
	}
}

func TestHookPhaseBoundReadFromTheEnvironmentOrRefused(t *testing.T) {
	t.Setenv(maxHookPhaseEnv, "")
	if d, err := maxHookPhase(); err != nil || d != defaultMaxHookPhase {
		t.Fatalf("unset: got %s, %v", d, err)
	}
	t.Setenv(maxHookPhaseEnv, "60")
	if d, err := maxHookPhase(); err != nil || d.Seconds() != 60 {
		t.Fatalf("60: got %s, %v", d, err)
	}
	for _, bad := range []string{"none", "0", "-5", "1.5"} {
		t.Setenv(maxHookPhaseEnv, bad)
		if _, err := maxHookPhase(); err == nil || err.Error() != maxHookPhaseEnv+"=\""+bad+"\": expected a positive number of seconds" {
			t.Fatalf("%q: got %v", bad, err)
		}
	}
}

func TestHooksDiffByDigestWhicheverFormHoldsThem(t *testing.T) {
	inline := hookOf(t, "Job", "migrate", 0, hookPreUpgrade)
	kept := Hook{Events: inline.Events, Digest: hookDigest(inline), Object: "batch/Job/web/migrate", APIVersion: "batch/v1"}
	d := map[string]pulumirpc.PropertyDiff_Kind{}
	diffHooks(d, []Hook{inline}, []Hook{kept})
	if len(d) != 0 {
		t.Fatalf("the same hook inline and kept in the content: got %v", d)
	}
	heavier := kept
	heavier.Weight = 5
	changed := hookOf(t, "Job", "migrate2", 0, hookPreUpgrade)
	diffHooks(d, []Hook{kept, inline}, []Hook{heavier, changed, inline})
	want := map[string]pulumirpc.PropertyDiff_Kind{"hooks[0]": pulumirpc.PropertyDiff_UPDATE, "hooks[1]": pulumirpc.PropertyDiff_UPDATE, "hooks[2]": pulumirpc.PropertyDiff_ADD}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("got %v, want %v", d, want)
	}
	if hookDigest(kept) == "" || hookDigest(Hook{Manifest: "not json"}) != "" {
		t.Fatal("a kept hook's digest is given; an undecodable manifest has none")
	}
}

func TestRenderModeRemovesAHookKeptInTheContentByItsIdentity(t *testing.T) {
	dir := t.TempDir()
	migrate := hookOf(t, "Job", "migrate", 0, hookPreUpgrade)
	if err := renderHooks(dir, nil, []Hook{migrate}); err != nil {
		t.Fatal(err)
	}
	kept := Hook{Events: migrate.Events, Digest: hookDigest(migrate), Object: "batch/Job/web/migrate", APIVersion: "batch/v1"}
	if err := renderHooks(dir, []Hook{kept}, nil); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "hooks", hookPreUpgrade, "1-manifest")); len(entries) != 0 {
		t.Fatalf("the hook's file is still there: %v", entries)
	}
}
