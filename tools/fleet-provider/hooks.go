package main

// Helm hooks as Helm's action package runs them around a release (helm.sh/helm/v4 pkg/action/hooks.go,
// the version Fleet v0.16.0's agent runs): a phase's hooks in order of weight, then name; each deleted
// first under its before-hook-creation policy (the default), created, and waited for (a Job until it
// completes, a Pod until it succeeds, anything else at once, as Helm's hook status readers judge them);
// the first that fails stops the phase, deleted if its policy says hook-failed; when all succeed, those
// whose policy says hook-succeeded are deleted, last first. A hook is created by a server-side apply, as
// Helm v4 does in Fleet's agent (an object of its name that is this pair's is updated in place). Hooks
// are never part of the set: not in the inventory, never pruned, never deleted with the pair (Helm keeps
// them with no release).
//
// Stricter than Helm, because a GitRepo is a team's boundary: a hook carries the pair's owner labels,
// and an object of the hook's name without them (another owner's) is never deleted or written; the
// hook fails instead. Helm's before-hook-creation delete does not wait for the object to go when the
// agent waits for nothing (no helm.timeoutSeconds); here it waits, within the hook's timeout. Helm
// watches a hook, this polls it: a Job the TTL controller deletes once it finished
// (ttlSecondsAfterFinished) counts as done when it is gone, any other hook gone before it finished fails.

import (
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
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
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
	// Helm's default when none is given; a policy it does not know counts as given (and deletes nothing).
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
		m, err := decodeManifest([]byte(h.Manifest))
		if err != nil {
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

// hookTimeout is each hook's wait: helm.timeoutSeconds when set, else Helm's default; a delete hook
// always Helm's default (Fleet's agent uninstalls without a timeout: deleteByRelease).
func hookTimeout(spec Spec, event string) time.Duration {
	if spec.HookTimeoutSeconds > 0 && event != hookPreDelete && event != hookPostDelete {
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
	timeout := hookTimeout(spec, event)
	owner := spec.DeletePolicy.OwnerLabels
	bound, err := maxHookPhase()
	if err != nil {
		return err
	}
	phase, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	err = runPhase(phase, ctx, rm, hooks, event, timeout, owner)
	if err != nil && ctx.Err() == nil && phase.Err() != nil {
		return fmt.Errorf("the %s hooks together ran past %s (%s): %w", event, maxHookPhaseEnv, bound, err)
	}
	return err
}

// runPhase runs the hooks within ctx (the phase's bound); their clean-up after a failure runs on
// outer, so a phase that ran out of time still deletes what its policies say.
func runPhase(ctx, outer context.Context, rm *ssa.ResourceManager, hooks []hookRun, event string, timeout time.Duration, owner map[string]string) error {
	c := rm.Client()
	for i, h := range hooks {
		if h.policy(hookBeforeCreation) {
			if err := deleteHook(ctx, c, h, owner, timeout, true); err != nil {
				return err
			}
		}
		if err := applyHook(ctx, rm, h, owner); err != nil {
			return fmt.Errorf("warning: Hook %s %s failed: %w", event, h.name(), err)
		}
		if err := waitHook(ctx, c, h, timeout); err != nil {
			// Helm deletes the failed hook under hook-failed, and the ones before it under hook-succeeded;
			// the hook's own error is the one told.
			cleanup, cancel := context.WithTimeout(outer, timeout)
			defer cancel()
			if h.policy(hookFailed) {
				_ = deleteHook(cleanup, c, h, owner, timeout, false)
			}
			_ = deleteSucceeded(cleanup, c, hooks[:i], owner, timeout)
			return err
		}
	}
	return deleteSucceeded(ctx, c, hooks, owner, timeout)
}

// applyHook creates the hook, or updates the object of its name when it is this pair's (a CRD hook, one
// a policy left behind), by a server-side apply as Helm v4's client does; another owner's is refused.
func applyHook(ctx context.Context, rm *ssa.ResourceManager, h hookRun, owner map[string]string) error {
	if _, err := ownLive(ctx, rm.Client(), h, owner); err != nil {
		return err
	}
	_, err := rm.Apply(ctx, h.obj.DeepCopy(), ssa.DefaultApplyOptions())
	return err
}

// ownLive reads the object of the hook's name: nil when there is none; an error when it lacks one of
// the pair's owner labels (another owner's object, never touched by a hook).
func ownLive(ctx context.Context, c client.Client, h hookRun, owner map[string]string) (*unstructured.Unstructured, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(h.obj.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(h.obj), live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("hook %s: reading it: %w", h.name(), err)
	}
	labels := live.GetLabels()
	for k, v := range owner {
		if labels[k] != v {
			return nil, fmt.Errorf("hook %s: an object of that name is there without this bundle deployment's label %s=%s: it is not deleted or written", h.name(), k, v)
		}
	}
	return live, nil
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
	live, err := ownLive(ctx, c, h, owner)
	if err != nil || live == nil {
		return err
	}
	key := client.ObjectKeyFromObject(h.obj)
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
	key := client.ObjectKeyFromObject(h.obj)
	_, ttl, _ := unstructured.NestedFieldNoCopy(h.obj.Object, "spec", "ttlSecondsAfterFinished")
	for {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(h.obj.GroupVersionKind())
		status, message := "InProgress", ""
		err := c.Get(ctx, key, live)
		switch {
		case apierrors.IsNotFound(err) && kind == "Job" && ttl:
			// Only a finished Job is deleted by the TTL controller: it completed between two polls.
			return nil
		case apierrors.IsNotFound(err):
			return fmt.Errorf("resource %s/%s/%s was deleted before it finished", kind, key.Namespace, key.Name)
		case err != nil:
			status, message = "Unknown", err.Error()
		default:
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
		return "InProgress", "Pod in progress"
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

// hookEvents are the events of a pair's apply: an install when no release was ever attempted, else an
// upgrade (Fleet's agent installs a release it does not find and upgrades one it does, a failed one
// included: a failed install is retried as an upgrade).
func hookEvents(st Status) (pre, post, failedPre, failedPost string) {
	if !released(st) {
		return hookPreInstall, hookPostInstall, "failed pre-install: ", "failed post-install: "
	}
	return hookPreUpgrade, hookPostUpgrade, "pre-upgrade hooks failed: ", "post-upgrade hooks failed: "
}

// released: the pair has a release, as Helm would: an install or upgrade was attempted (Released), or
// an earlier version of this provider applied it (it kept no such mark) or one took it over (adopt).
func released(st Status) bool {
	return st.Released || st.Revision > 0 || len(st.Inventory) > 0
}

// hooksDue: this apply is a new release of the pair (its deploymentID's hooks have not all run), so
// Helm would install or upgrade and run the hooks; a retry of a release whose hooks ran (a readiness
// retry, drift put back) runs none, as Fleet's agent does not upgrade an unchanged release. A pair an
// earlier version deployed (which applied hooks as objects and kept no mark) runs them at its next new
// deploymentID only; one taken over from per-object resources, not before its next one either.
func hooksDue(st Status, spec Spec) bool {
	if len(spec.Hooks) == 0 || st.HooksRunFor == spec.DeploymentID {
		return false
	}
	if !st.Released && released(st) {
		return st.Revision > 0 && st.AppliedDeploymentID != spec.DeploymentID
	}
	return true
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

// diffHooks names the hooks that changed, as `hooks[<index>]`: events, weight, delete policies and the
// manifest's digest, whichever form holds it (inline, or kept in the pair's content), so a pair whose
// hooks move between the two forms unchanged has no diff.
func diffHooks(detailed map[string]pulumirpc.PropertyDiff_Kind, olds, news []Hook) {
	for i := 0; i < len(olds) || i < len(news); i++ {
		path := fmt.Sprintf("hooks[%d]", i)
		switch {
		case i >= len(olds):
			detailed[path] = pulumirpc.PropertyDiff_ADD
		case i >= len(news):
			detailed[path] = pulumirpc.PropertyDiff_DELETE
		case !slices.Equal(olds[i].Events, news[i].Events) || olds[i].Weight != news[i].Weight ||
			!slices.Equal(olds[i].DeletePolicies, news[i].DeletePolicies) || hookDigest(olds[i]) != hookDigest(news[i]):
			detailed[path] = pulumirpc.PropertyDiff_UPDATE
		}
	}
}

// hookDigest is the digest of a hook's manifest with its owner labels: given in the content form,
// computed from the manifest inline ("" when it does not decode: then it differs from any other).
func hookDigest(h Hook) string {
	if h.Manifest == "" {
		return h.Digest
	}
	m, err := decodeManifest([]byte(h.Manifest))
	if err != nil {
		return ""
	}
	return objectDigest(m)
}
