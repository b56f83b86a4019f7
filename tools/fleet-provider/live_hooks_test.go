//go:build live

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// hookSpec is a pair's spec with its set and its hooks.
func hookSpec(t *testing.T, deploymentID string, set []map[string]any, hooks ...Hook) Spec {
	spec := specOf(deploymentID, set...)
	spec.Hooks = hooks
	return spec
}

// liveHook is a hook of the manifest, with the owner labels.
func liveHook(t *testing.T, m map[string]any, weight int, policies []string, events ...string) Hook {
	t.Helper()
	m["metadata"].(map[string]any)["labels"] = labelsOf(owner)
	text, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return Hook{Events: events, Weight: weight, DeletePolicies: policies, Manifest: string(text)}
}

func hookConfigMap(ns, name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{"k": "v"}}
}

// hookJob is a Job whose one pod exits with the code (kwok plays it: automation/clusters/kwok-stages.yaml pod-exit).
func hookJob(ns, name string, exit int) map[string]any {
	return map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"backoffLimit": 0,
			"template": map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{"pulumi-fleet.test/exit": strconv.Itoa(exit)}},
				"spec": map[string]any{
					"restartPolicy": "Never",
					"containers":    []any{map[string]any{"name": "run", "image": "busybox"}},
				},
			},
		},
	}
}

// createdAt is the object's resourceVersion as a number: etcd's revision when it was last written, so
// objects written once compare in the order they were created.
func createdAt(t *testing.T, apiVersion, kind, ns, name string) int {
	t.Helper()
	u := liveObject(t, apiVersion, kind, ns, name)
	if u == nil {
		t.Fatalf("%s %s/%s is not there", kind, ns, name)
	}
	n, err := strconv.Atoi(u.GetResourceVersion())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLiveHooksRunAtTheirPhasesByWeightAndOncePerRelease(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	set := []map[string]any{liveConfigMap(ns, "app", map[string]any{"k": "1"})}
	hooks := []Hook{
		liveHook(t, hookConfigMap(ns, "a-late"), 1, nil, hookPreInstall),
		liveHook(t, hookConfigMap(ns, "z-early"), -1, nil, hookPreInstall),
		liveHook(t, hookJob(ns, "migrate", 0), 0, []string{hookSucceeded}, hookPreInstall, hookPreUpgrade),
		liveHook(t, hookConfigMap(ns, "post"), 0, nil, hookPostInstall),
		liveHook(t, hookConfigMap(ns, "upgraded"), 0, nil, hookPreUpgrade),
	}
	first := applied(t, live, nil, hookSpec(t, "h-1", set, hooks...))
	mustBeReady(t, first)
	order := []int{
		createdAt(t, "v1", "ConfigMap", ns, "z-early"),
		createdAt(t, "v1", "ConfigMap", ns, "a-late"),
		createdAt(t, "v1", "ConfigMap", ns, "app"),
		createdAt(t, "v1", "ConfigMap", ns, "post"),
	}
	for i := 1; i < len(order); i++ {
		if order[i-1] >= order[i] {
			t.Fatalf("pre-install hooks by weight (z-early, a-late), the set, then post-install: revisions %v", order)
		}
	}
	if liveObject(t, "batch/v1", "Job", ns, "migrate") != nil {
		t.Fatal("the Job hook completed and its policy (hook-succeeded) deletes it")
	}
	if liveObject(t, "v1", "ConfigMap", ns, "upgraded") != nil {
		t.Fatal("a pre-upgrade-only hook ran at the install")
	}
	if first.HooksRunFor != "h-1" || len(first.Inventory) != 1 {
		t.Fatalf("hooks run for %q, inventory %v: want h-1, the set's one object (hooks are never in it)", first.HooksRunFor, first.Inventory)
	}

	// The same release again (a readiness retry): no hook runs.
	again := applied(t, live, first, hookSpec(t, "h-1", set, hooks...))
	mustBeReady(t, again)
	if liveObject(t, "v1", "ConfigMap", ns, "upgraded") != nil {
		t.Fatal("a retry of the same release ran the upgrade hooks")
	}
	before := liveObject(t, "v1", "ConfigMap", ns, "z-early").GetUID()

	// A new release: an upgrade; the install hooks stay as they are (Helm never deletes a hook by itself).
	upgraded := applied(t, live, again, hookSpec(t, "h-2", set, hooks...))
	mustBeReady(t, upgraded)
	if liveObject(t, "v1", "ConfigMap", ns, "upgraded") == nil || upgraded.HooksRunFor != "h-2" {
		t.Fatalf("the pre-upgrade hook did not run (hooks run for %q)", upgraded.HooksRunFor)
	}
	if liveObject(t, "v1", "ConfigMap", ns, "z-early").GetUID() != before {
		t.Fatal("an install hook ran at the upgrade")
	}

	// Deleted as Helm's uninstall: the hooks stay, the set goes.
	if err := deletePair(t.Context(), live, *upgraded); err != nil {
		t.Fatal(err)
	}
	if liveObject(t, "v1", "ConfigMap", ns, "z-early") == nil {
		t.Fatal("deleting the pair deleted a hook")
	}
}

func TestLiveFailedHookFailsThePairBeforeItsSetWithHelmsWords(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	set := []map[string]any{liveConfigMap(ns, "app", map[string]any{"k": "1"})}
	spec := hookSpec(t, "f-1", set, liveHook(t, hookJob(ns, "check", 1), 0, []string{hookFailed}, hookPreInstall))
	got := applied(t, live, nil, spec)
	want := "failed pre-install: resource Job/" + ns + "/check not ready. status: Failed, message: Job Failed. failed: 1/1"
	if got.State != StateErrApplied || len(got.Messages) != 1 || got.Messages[0] != want {
		t.Fatalf("state %s, messages %q: want ErrApplied, %q", got.State, got.Messages, want)
	}
	if liveObject(t, "v1", "ConfigMap", ns, "app") != nil || len(got.Inventory) != 0 || got.HooksRunFor != "" {
		t.Fatal("a failed pre-install hook applied the set")
	}
	if liveObject(t, "batch/v1", "Job", ns, "check") != nil {
		t.Fatal("the failed hook's policy (hook-failed) deletes it")
	}
}

func TestLiveHookNeverReplacesAnotherOwnersObject(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	theirs := hookConfigMap(ns, "shared")
	if err := live.Client().Create(t.Context(), manifestObject(theirs)); err != nil {
		t.Fatal(err)
	}
	uid := liveObject(t, "v1", "ConfigMap", ns, "shared").GetUID()
	got := applied(t, live, nil, hookSpec(t, "o-1", nil, liveHook(t, hookConfigMap(ns, "shared"), 0, nil, hookPreInstall)))
	if got.State != StateErrApplied || len(got.Messages) != 1 || !strings.Contains(got.Messages[0], "without this bundle deployment's label") {
		t.Fatalf("state %s, messages %q: want ErrApplied naming the missing owner label", got.State, got.Messages)
	}
	if liveObject(t, "v1", "ConfigMap", ns, "shared").GetUID() != uid {
		t.Fatal("another owner's object was replaced by a hook")
	}
}

func TestLiveDeleteHooksRunAroundTheUninstall(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	set := []map[string]any{liveConfigMap(ns, "app", map[string]any{"k": "1"})}
	spec := hookSpec(t, "d-1", set,
		liveHook(t, hookConfigMap(ns, "pre-delete"), 0, nil, hookPreDelete),
		liveHook(t, hookConfigMap(ns, "post-delete"), 0, nil, hookPostDelete))
	deployed := applied(t, live, nil, spec)
	mustBeReady(t, deployed)
	if liveObject(t, "v1", "ConfigMap", ns, "pre-delete") != nil {
		t.Fatal("a delete hook ran at the install")
	}
	appAt := createdAt(t, "v1", "ConfigMap", ns, "app")
	if err := deletePair(t.Context(), live, *deployed); err != nil {
		t.Fatal(err)
	}
	pre, post := createdAt(t, "v1", "ConfigMap", ns, "pre-delete"), createdAt(t, "v1", "ConfigMap", ns, "post-delete")
	if !(appAt < pre && pre < post) {
		t.Fatalf("pre-delete then post-delete after the install: revisions app %d, pre %d, post %d", appAt, pre, post)
	}
	if u := liveObject(t, "v1", "ConfigMap", ns, "app"); u != nil && u.GetDeletionTimestamp() == nil {
		t.Fatal("the set was not deleted")
	}
}

func TestLiveFailedPreDeleteHookDeletesNothing(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	set := []map[string]any{liveConfigMap(ns, "app", map[string]any{"k": "1"})}
	deployed := applied(t, live, nil, hookSpec(t, "p-1", set, liveHook(t, hookJob(ns, "guard", 1), 0, nil, hookPreDelete)))
	mustBeReady(t, deployed)
	err := deletePair(t.Context(), live, *deployed)
	if err == nil || !strings.Contains(err.Error(), "resource Job/"+ns+"/guard not ready. status: Failed") {
		t.Fatalf("got %v: want the hook's failure", err)
	}
	if u := liveObject(t, "v1", "ConfigMap", ns, "app"); u == nil || u.GetDeletionTimestamp() != nil {
		t.Fatal("a failed pre-delete hook let the set be deleted")
	}
}

// hookPod is a Pod that kwok keeps Running: a hook that never finishes.
func hookPod(ns, name string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "run", "image": "busybox"}}},
	}
}

func TestLiveHookTimesOutWithinItsTimeout(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	spec := hookSpec(t, "t-1", nil, liveHook(t, hookPod(ns, "slow"), 0, nil, hookPreInstall))
	spec.HookTimeoutSeconds = 2
	got := applied(t, live, nil, spec)
	want := "failed pre-install: resource Pod/" + ns + "/slow not ready. status: InProgress, message: Pod in progress; context deadline exceeded"
	if got.State != StateErrApplied || len(got.Messages) != 1 || got.Messages[0] != want {
		t.Fatalf("state %s, messages %q: want ErrApplied, %q", got.State, got.Messages, want)
	}
}

func TestLiveHookPhaseBoundedWhateverItsHooksAsk(t *testing.T) {
	t.Setenv(maxHookPhaseEnv, "2")
	ns := liveNamespace(t)
	spec := hookSpec(t, "b-1", nil, liveHook(t, hookPod(ns, "slow"), 0, nil, hookPreInstall))
	spec.HookTimeoutSeconds = 600
	got := applied(t, live, nil, spec)
	if got.State != StateErrApplied || len(got.Messages) != 1 || !strings.HasPrefix(got.Messages[0], "failed pre-install: the pre-install hooks together ran past PULUMI_FLEET_MAX_HOOK_SECONDS (2s): ") {
		t.Fatalf("state %s, messages %q: want ErrApplied naming the bound", got.State, got.Messages)
	}
}

func TestLiveHookLeftByItsPolicyIsAppliedAgainNotRefused(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	// hook-failed alone: a hook that succeeded stays; the next release applies it again (Helm v4's
	// server-side apply), where a plain create would meet "already exists".
	hook := func(version string) Hook {
		m := hookConfigMap(ns, "kept")
		m["data"] = map[string]any{"version": version}
		return liveHook(t, m, 0, []string{hookFailed}, hookPreInstall, hookPreUpgrade)
	}
	first := applied(t, live, nil, hookSpec(t, "k-1", nil, hook("1")))
	mustBeReady(t, first)
	second := applied(t, live, first, hookSpec(t, "k-2", nil, hook("2")))
	mustBeReady(t, second)
	if got := dataOf(t, ns, "kept")["version"]; got != "2" {
		t.Fatalf("the hook left by its policy holds version %v, want 2", got)
	}
}

func TestLiveFailedInstallIsRetriedAsAnUpgrade(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	spec := func(exit int) Spec {
		return hookSpec(t, "r-1", []map[string]any{liveConfigMap(ns, "app", map[string]any{"k": "1"})},
			liveHook(t, hookJob(ns, "gate", exit), 0, []string{hookBeforeCreation, hookSucceeded}, hookPreInstall, hookPreUpgrade),
			liveHook(t, hookConfigMap(ns, "installed"), 0, nil, hookPostInstall),
			liveHook(t, hookConfigMap(ns, "upgraded"), 0, nil, hookPostUpgrade))
	}
	failed := applied(t, live, nil, spec(1))
	if failed.State != StateErrApplied || !failed.Released {
		t.Fatalf("state %s, released %v: want ErrApplied, a release attempted", failed.State, failed.Released)
	}
	retried := applied(t, live, failed, spec(0))
	mustBeReady(t, retried)
	if liveObject(t, "v1", "ConfigMap", ns, "installed") != nil || liveObject(t, "v1", "ConfigMap", ns, "upgraded") == nil {
		t.Fatal("the retry of a failed install ran install hooks, not upgrade hooks (Helm upgrades a failed release)")
	}
}

func TestLiveNeverReleasedPairRunsNoDeleteHook(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	spec := hookSpec(t, "n-1", []map[string]any{liveConfigMap(ns, "app", map[string]any{"k": "1"})}, liveHook(t, hookConfigMap(ns, "goodbye"), 0, nil, hookPreDelete))
	spec.WaitFor = []Gate{{Name: "other", State: StateNotReady}}
	held := applied(t, live, nil, spec)
	if held.State != StateWaitApplied || held.Released {
		t.Fatalf("state %s, released %v: want WaitApplied, no release", held.State, held.Released)
	}
	if err := deletePair(t.Context(), live, *held); err != nil {
		t.Fatal(err)
	}
	if liveObject(t, "v1", "ConfigMap", ns, "goodbye") != nil {
		t.Fatal("a pair that never had a release ran its pre-delete hook")
	}
}

func TestLiveJobDeletedByItsTTLCountsAsDone(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	job := hookJob(ns, "brief", 0)
	job["spec"].(map[string]any)["ttlSecondsAfterFinished"] = 0
	got := applied(t, live, nil, hookSpec(t, "ttl-1", nil, liveHook(t, job, 0, nil, hookPreInstall)))
	mustBeReady(t, got)
}

// gadgetDefinition is a CRD of its own (cluster-wide: each test its own group), with the owner labels.
func gadgetDefinition(group string, versions ...string) map[string]any {
	open := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	var vs []any
	for i, v := range versions {
		vs = append(vs, map[string]any{"name": v, "served": true, "storage": i == len(versions)-1, "schema": map[string]any{"openAPIV3Schema": open}})
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets." + group, "labels": labelsOf(owner)},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names":    map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
			"versions": vs,
		},
	}
}

func TestLiveChartCrdsCreatedAtTheInstallOnlyThenAppliedWhenReplaced(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	group := fmt.Sprintf("g%d.golive.example.com", runID)
	name := "gadgets." + group
	t.Cleanup(func() {
		_ = live.Client().Delete(context.Background(), manifestObject(gadgetDefinition(group, "v1")))
	})
	gadget := func(version string) map[string]any {
		return map[string]any{"apiVersion": group + "/" + version, "kind": "Gadget", "metadata": map[string]any{"name": "g", "namespace": ns, "labels": labelsOf(owner)}}
	}
	with := func(id string, crd map[string]any, createOnly bool, rest ...map[string]any) Spec {
		s := specOf(id, rest...)
		s.Objects[keyOf(manifestObject(crd))] = DesiredObject{Manifest: crd, CreateOnly: createOnly, Retain: "a chart's crds/"}
		return s
	}
	served := func() []any {
		u := liveObject(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name)
		vs, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		return vs
	}
	// The install creates it, established before the Gadget that uses it.
	first := applied(t, live, nil, with("c-1", gadgetDefinition(group, "v1"), true, gadget("v1")))
	mustBeReady(t, first)
	if len(served()) != 1 {
		t.Fatalf("the CRD serves %d versions, want 1", len(served()))
	}
	// An upgrade: the chart's CRD gained v2, and is not updated (Helm never upgrades crds/).
	second := applied(t, live, first, with("c-2", gadgetDefinition(group, "v1", "v2"), true, gadget("v1")))
	mustBeReady(t, second)
	if len(served()) != 1 {
		t.Fatal("an upgrade updated a chart's crds/ CRD")
	}
	if st, _ := driftOf(t.Context(), live, *second); st.State != StateReady {
		t.Fatalf("a crds/ CRD older than the chart's is drift: state %s, %q", st.State, st.Messages)
	}
	// chartCrds: CreateReplace: applied, established before the v2 Gadget, in the same apply.
	third := applied(t, live, second, with("c-3", gadgetDefinition(group, "v1", "v2"), false, gadget("v2")))
	mustBeReady(t, third)
	if len(served()) != 2 {
		t.Fatal("CreateReplace did not update the CRD")
	}
}

func TestLiveChartCrdsAtTheInstallApplyOverAnOlderOneUnlessForcedOrTakenOver(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	group := fmt.Sprintf("h%d.golive.example.com", runID)
	name := "gadgets." + group
	// As an earlier install of this provider left it (the same field manager, by apply); another
	// manager's would fail the install (TestLiveChartCrdsInstallFailsOnAFieldAnotherManagerHolds).
	if _, err := applyUnforced(t.Context(), live.Client(), manifestObject(gadgetDefinition(group, "v1"))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Client().Delete(context.Background(), manifestObject(gadgetDefinition(group, "v1"))) })
	served := func() int {
		vs, _, _ := unstructured.NestedSlice(liveObject(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name).Object, "spec", "versions")
		return len(vs)
	}
	install := func(id string, force bool) *Outputs {
		crd := gadgetDefinition(group, "v1", "v2")
		s := specOf(id, liveConfigMap(ns, id, map[string]any{"k": "v"}))
		s.Objects[keyOf(manifestObject(crd))] = DesiredObject{Manifest: crd, CreateOnly: true, Retain: "a chart's crds/"}
		s.InstallsWithoutServerSideApply = force
		return applied(t, live, nil, s)
	}
	// helm.force (or takeOwnership): the agent installs without server-side apply: only created when absent.
	mustBeReady(t, install("forced", true))
	if served() != 1 {
		t.Fatal("a forced install updated a CRD that was there")
	}
	// Otherwise a server-side apply, as the agent installs: the CRD is brought to the chart's version.
	mustBeReady(t, install("plain", false))
	if served() != 2 {
		t.Fatal("an install did not bring the CRD there to the chart's version")
	}
}

func TestLiveChartCrdsInstallFailsOnAFieldAnotherManagerHolds(t *testing.T) {
	t.Parallel()
	ns := liveNamespace(t)
	group := fmt.Sprintf("k%d.golive.example.com", runID)
	theirs := gadgetDefinition(group, "v1")
	theirs["metadata"].(map[string]any)["labels"] = map[string]any{"tier": "platform"}
	if err := live.Client().Create(t.Context(), manifestObject(theirs), client.FieldOwner("platform-team")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Client().Delete(context.Background(), manifestObject(gadgetDefinition(group, "v1"))) })
	crd := gadgetDefinition(group, "v1")
	crd["metadata"].(map[string]any)["labels"].(map[string]any)["tier"] = "chart"
	s := specOf("x-1", liveConfigMap(ns, "app", map[string]any{"k": "v"}))
	s.Objects[keyOf(manifestObject(crd))] = DesiredObject{Manifest: crd, CreateOnly: true, Retain: "a chart's crds/"}
	got := applied(t, live, nil, s)
	if got.State != StateErrApplied || len(got.Messages) != 1 || !strings.HasPrefix(got.Messages[0], "failed to install CRD gadgets."+group+": ") || !strings.Contains(got.Messages[0], "conflict") {
		t.Fatalf("state %s, messages %q: want the install refused on the other manager's field", got.State, got.Messages)
	}
	if labels := liveObject(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "gadgets."+group).GetLabels(); labels["tier"] != "platform" {
		t.Fatalf("the other manager's field was taken: %v", labels)
	}
}
