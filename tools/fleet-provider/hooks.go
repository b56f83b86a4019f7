package main

// Helm hooks as Helm's action package runs them around a release (helm.sh/helm/v4 pkg/action/hooks.go,
// the version Fleet v0.16.0's agent runs): a phase's hooks in order of weight, then name; each deleted
// first under its before-hook-creation policy (the default), created, and waited for (a Job until it
// completes, a Pod until it succeeds, anything else at once, as Helm's hook status readers judge them);
// the first that fails stops the phase, deleted if its policy says hook-failed; when all succeed, those
// whose policy says hook-succeeded are deleted, last first. Hooks are never part of the set: not in the
// inventory, never pruned, never deleted with the pair (Helm keeps them with no release).
//
// Stricter than Helm, because a GitRepo is a team's boundary: a hook carries the pair's owner labels,
// and an object of the hook's name without them (another owner's) is never deleted or replaced; the
// hook fails instead. Helm's before-hook-creation delete does not wait for the object to go when the
// agent waits for nothing (no helm.timeoutSeconds) and so may meet "already exists"; here it waits,
// within the hook's timeout.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fluxcd/pkg/ssa"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Helm's hook events this provider runs, and its delete policies (helm.sh/helm/v4 pkg/release/v1).
const (
	hookPreInstall  = "pre-install"
	hookPostInstall = "post-install"
	hookPreUpgrade  = "pre-upgrade"
	hookPostUpgrade = "post-upgrade"
	hookPreDelete   = "pre-delete"
	hookPostDelete  = "post-delete"

	hookBeforeCreation = "before-hook-creation"
	hookSucceeded      = "hook-succeeded"
	hookFailed         = "hook-failed"
)

// defaultHookTimeout is Helm v4's status watcher default (kube.DefaultStatusWatcherTimeout), what a hook
// gets from Fleet's agent when helm.timeoutSeconds is not set.
const defaultHookTimeout = 30 * time.Second

// maxHookPhaseEnv bounds the time of all of one phase's hooks of a pair (content chooses how many hooks
// and each one's timeout): past it the phase fails, naming it.
const maxHookPhaseEnv = "PULUMI_FLEET_MAX_HOOK_SECONDS"

const defaultMaxHookPhase = 900 * time.Second

func maxHookPhase() (time.Duration, error) {
	text, set := os.LookupEnv(maxHookPhaseEnv)
	if !set || text == "" {
		return defaultMaxHookPhase, nil
	}
	v, err := strconv.Atoi(text)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%s=%q: expected a positive number of seconds", maxHookPhaseEnv, text)
	}
	return time.Duration(v) * time.Second, nil
}

// hookRun is one hook of a phase, its manifest decoded.
type hookRun struct {
	Hook
	obj *unstructured.Unstructured
}

func (h hookRun) name() string {
	if ns := h.obj.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", h.obj.GetKind(), ns, h.obj.GetName())
	}
	return fmt.Sprintf("%s %s", h.obj.GetKind(), h.obj.GetName())
}

func (h hookRun) policy(p string) bool {
	if len(h.DeletePolicies) == 0 {
		return p == hookBeforeCreation
	}
	return slices.Contains(h.DeletePolicies, p)
}

// phaseHooks are the hooks of one event in the order Helm runs them: by weight, then by name, the
// release's order otherwise (sort.Stable, as Helm's hookByWeight).
func phaseHooks(hooks []Hook, event string) ([]hookRun, error) {
	var out []hookRun
	for _, h := range hooks {
		if !slices.Contains(h.Events, event) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(h.Manifest)))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("a %s hook's manifest: %w", event, err)
		}
		out = append(out, hookRun{Hook: h, obj: &unstructured.Unstructured{Object: m}})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Weight == out[j].Weight {
			return out[i].obj.GetName() < out[j].obj.GetName()
		}
		return out[i].Weight < out[j].Weight
	})
	return out, nil
}

// hookTimeout is each hook's wait: helm.timeoutSeconds when set, else Helm's default.
func hookTimeout(spec Spec) time.Duration {
	if spec.HookTimeoutSeconds > 0 {
		return time.Duration(spec.HookTimeoutSeconds) * time.Second
	}
	return defaultHookTimeout
}

// runHooks runs one event's hooks of the spec; its error is in Helm's words, without the phase prefix
// the caller adds as Helm's install, upgrade or uninstall does.
func runHooks(ctx context.Context, rm *ssa.ResourceManager, spec Spec, event string) error {
	hooks, err := phaseHooks(spec.Hooks, event)
	if err != nil || len(hooks) == 0 {
		return err
	}
	c := rm.Client()
	timeout := hookTimeout(spec)
	owner := spec.DeletePolicy.OwnerLabels
	bound, err := maxHookPhase()
	if err != nil {
		return err
	}
	phase, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	err = runPhase(phase, c, hooks, event, timeout, owner)
	if err != nil && ctx.Err() == nil && phase.Err() != nil {
		return fmt.Errorf("the %s hooks together ran past %s (%s): %w", event, maxHookPhaseEnv, bound, err)
	}
	return err
}

func runPhase(ctx context.Context, c client.Client, hooks []hookRun, event string, timeout time.Duration, owner map[string]string) error {
	for i, h := range hooks {
		if h.policy(hookBeforeCreation) {
			if err := deleteHook(ctx, c, h, owner, timeout, true); err != nil {
				return err
			}
		}
		if err := c.Create(ctx, h.obj.DeepCopy()); err != nil {
			return fmt.Errorf("warning: Hook %s %s failed: %w", event, h.name(), err)
		}
		if err := waitHook(ctx, c, h, timeout); err != nil {
			// Helm deletes the failed hook under hook-failed, and the ones before it under hook-succeeded;
			// the hook's own error is the one told.
			if h.policy(hookFailed) {
				_ = deleteHook(ctx, c, h, owner, timeout, false)
			}
			_ = deleteSucceeded(ctx, c, hooks[:i], owner, timeout)
			return err
		}
	}
	return deleteSucceeded(ctx, c, hooks, owner, timeout)
}

// deleteSucceeded deletes, last first, the hooks whose policy says hook-succeeded.
func deleteSucceeded(ctx context.Context, c client.Client, hooks []hookRun, owner map[string]string, timeout time.Duration) error {
	for i := len(hooks) - 1; i >= 0; i-- {
		if hooks[i].policy(hookSucceeded) {
			if err := deleteHook(ctx, c, hooks[i], owner, timeout, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteHook deletes a hook's object (background propagation, as Helm) if it is there and this pair's;
// wait: until it is gone. A CustomResourceDefinition is never deleted (Helm's rule: the cascade).
func deleteHook(ctx context.Context, c client.Client, h hookRun, owner map[string]string, timeout time.Duration, wait bool) error {
	if h.obj.GetKind() == "CustomResourceDefinition" {
		return nil
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(h.obj.GroupVersionKind())
	key := client.ObjectKey{Namespace: h.obj.GetNamespace(), Name: h.obj.GetName()}
	if err := c.Get(ctx, key, live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("hook %s: reading it before deleting it: %w", h.name(), err)
	}
	labels := live.GetLabels()
	for k, v := range owner {
		if labels[k] != v {
			return fmt.Errorf("hook %s: an object of that name is there without this bundle deployment's label %s=%s: it is not deleted or replaced", h.name(), k, v)
		}
	}
	if err := c.Delete(ctx, live, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: ptr(live.GetUID())}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("hook %s: deleting it: %w", h.name(), err)
	}
	if !wait {
		return nil
	}
	deadline := deadlineOf(ctx, timeout)
	for {
		if err := c.Get(ctx, key, &unstructured.Unstructured{Object: map[string]any{"apiVersion": h.obj.GetAPIVersion(), "kind": h.obj.GetKind()}}); apierrors.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("hook %s: the earlier one was not gone within %s", h.name(), timeout)
		}
		if err := sleepCtx(ctx, waitInterval); err != nil {
			return err
		}
	}
}

// waitHook waits until the hook is done as Helm's hook status readers judge it (helm.sh/helm/v4
// internal/statusreaders): a Job when its Complete condition is true, failed when its Failed one is; a
// Pod when its phase is Succeeded, failed when Failed; any other kind at once. The words are Helm's.
func waitHook(ctx context.Context, c client.Client, h hookRun, timeout time.Duration) error {
	kind := h.obj.GetKind()
	if gk := h.obj.GroupVersionKind().GroupKind(); gk.String() != "Job.batch" && gk.String() != "Pod" {
		return nil
	}
	deadline := deadlineOf(ctx, timeout)
	key := client.ObjectKey{Namespace: h.obj.GetNamespace(), Name: h.obj.GetName()}
	for {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(h.obj.GroupVersionKind())
		status, message := "InProgress", ""
		if err := c.Get(ctx, key, live); err != nil {
			status, message = "Unknown", err.Error()
		} else {
			status, message = hookStatus(live)
		}
		switch status {
		case "Current":
			return nil
		case "Failed":
			return fmt.Errorf("resource %s/%s/%s not ready. status: %s, message: %s", kind, key.Namespace, key.Name, status, message)
		}
		if time.Now().After(deadline) {
			return errors.Join(
				fmt.Errorf("resource %s/%s/%s not ready. status: %s, message: %s", kind, key.Namespace, key.Name, status, message),
				context.DeadlineExceeded)
		}
		if err := sleepCtx(ctx, waitInterval); err != nil {
			return err
		}
	}
}

// hookStatus is a live Job's or Pod's kstatus as Helm's hook readers give it, with their message.
func hookStatus(u *unstructured.Unstructured) (string, string) {
	if u.GetKind() == "Pod" {
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		switch phase {
		case "Succeeded":
			return "Current", fmt.Sprintf("pod %s succeeded", u.GetName())
		case "Failed":
			return "Failed", fmt.Sprintf("pod %s failed", u.GetName())
		}
		return "InProgress", fmt.Sprintf("pod %s is in progress", u.GetName())
	}
	parallelism := nestedInt(u, 1, "spec", "parallelism")
	completions := nestedInt(u, parallelism, "spec", "completions")
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		cond, _ := c.(map[string]any)
		if cond["status"] != "True" {
			continue
		}
		switch cond["type"] {
		case "Complete":
			return "Current", fmt.Sprintf("Job Completed. succeeded: %d/%d", nestedInt(u, 0, "status", "succeeded"), completions)
		case "Failed":
			return "Failed", fmt.Sprintf("Job Failed. failed: %d/%d", nestedInt(u, 0, "status", "failed"), completions)
		}
	}
	return "InProgress", "Job in progress"
}

// nestedInt reads an integer field however the decoder typed it (int64 from the API, json.Number from a manifest).
func nestedInt(u *unstructured.Unstructured, def int64, fields ...string) int64 {
	v, found, _ := unstructured.NestedFieldNoCopy(u.Object, fields...)
	if !found {
		return def
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i
		}
	}
	return def
}

// deadlineOf is the earlier of the timeout from now and the context's deadline.
func deadlineOf(ctx context.Context, timeout time.Duration) time.Time {
	d := time.Now().Add(timeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		return cd
	}
	return d
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func ptr[T any](v T) *T { return &v }

// hookEvents are the events of a pair's apply: an install before its first successful apply, else an
// upgrade (Fleet's agent installs a release it does not find, and upgrades one it does).
func hookEvents(st Status) (pre, post, failedPre, failedPost string) {
	if st.Revision == 0 {
		return hookPreInstall, hookPostInstall, "failed pre-install: ", "failed post-install: "
	}
	return hookPreUpgrade, hookPostUpgrade, "pre-upgrade hooks failed: ", "post-upgrade hooks failed: "
}

// hooksDue: this apply is a new release of the pair (its deploymentID's hooks have not all run), so
// Helm would install or upgrade and run the hooks; a retry of a release whose hooks ran (a readiness
// retry, drift put back) runs none, as Fleet's agent does not upgrade an unchanged release.
func hooksDue(st Status, spec Spec) bool {
	return len(spec.Hooks) > 0 && st.HooksRunFor != spec.DeploymentID
}

// withHooksKept marks, among the last set's objects, those that are hooks now (an earlier version
// applied hooks as ordinary objects): a prune leaves them, as Helm leaves a hook.
func withHooksKept(previous map[string]DesiredObject, hooks []Hook) map[string]DesiredObject {
	if len(hooks) == 0 || len(previous) == 0 {
		return previous
	}
	out := make(map[string]DesiredObject, len(previous))
	for k, o := range previous {
		out[k] = o
	}
	for _, h := range hooks {
		var m struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if json.Unmarshal([]byte(h.Manifest), &m) != nil {
			continue
		}
		k := objectKey(groupOf(m.APIVersion), m.Kind, m.Metadata.Namespace, m.Metadata.Name)
		if o, ok := out[k]; ok && o.Retain == "" {
			o.Retain = "a Helm hook now, which Helm never deletes with its release"
			out[k] = o
		}
	}
	return out
}

// hookLines is a hook error as the pair's messages: one line per joined error.
func hookLines(prefix string, err error) []string {
	return []string{prefix + strings.ReplaceAll(err.Error(), "\n", "; ")}
}
