package main

// Acting on a cluster: the pair's apply (fluxcd/pkg/ssa's staged server-side apply, the prune its
// decision in decide.go asks for, the readiness wait with kstatus) and the pair's deletion. Every
// failure becomes the pair's status; nothing here returns an error to the engine except a deletion
// that could not finish, which keeps the pair in the state so nothing is orphaned.

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// How often kstatus polls while waiting for readiness.
const waitInterval = 500 * time.Millisecond

// applyPair applies spec on the cluster and returns the pair's new status. prev is the pair's last
// outputs (nil when new): its inventory is what a prune may delete. takeOverFields: move the fields of
// spec.AdoptFieldManagers to this provider's field manager (a metadata write on each such object).
func applyPair(ctx context.Context, rm *ssa.ResourceManager, prev *Outputs, spec Spec, takeOverFields bool) Status {
	st := applyOnce(ctx, rm, prev, spec, takeOverFields)
	// A setup's refused namespaces are in its messages too, whatever its state: the program reads them
	// there for the pairs that need them (namespaceRefusalLine).
	st.Messages = append(st.Messages, refusalLines(st.Refused)...)
	return st
}

func applyOnce(ctx context.Context, rm *ssa.ResourceManager, prev *Outputs, spec Spec, takeOverFields bool) Status {
	st, previous := carriedStatus(prev)
	if spec.Paused {
		return paused(st)
	}
	if len(spec.NamespacesRefused) > 0 {
		// A namespace it needs is not there as asked: nothing is applied or pruned until it is.
		st.State, st.Messages = StateErrApplied, refusedNamespaceMessages(spec.NamespacesRefused)
		return st
	}
	if msg := gateMessage(spec.WaitFor); msg != "" {
		st.State, st.Messages = StateWaitApplied, []string{msg}
		return st
	}
	all, err := spec.unstructuredObjects()
	if err != nil {
		st.State, st.Messages = StateErrApplied, []string{err.Error()}
		return st
	}
	rules, err := compileHealthChecks(spec.HealthChecks)
	if err != nil {
		st.State, st.Messages = StateErrApplied, []string{err.Error()}
		return st
	}
	// A chart's crds/ as Helm installs them (crds.go): created at the install, before anything else, and
	// never applied after; a failure leaves no release, as Helm's.
	createOnly, objects := splitCreateOnly(spec, all)
	if !released(st) && len(createOnly) > 0 {
		if err := installCRDs(ctx, rm, spec, createOnly, objects); err != nil {
			st.State, st.Messages = StateErrApplied, []string{err.Error()}
			return st
		}
	}
	// Helm's hooks around a new release of the pair (hooks.go): a failed pre hook applies nothing.
	hooks := hooksDue(st, spec)
	pre, post, failedPre, failedPost := hookEvents(st)
	st.Released = true
	if hooks {
		if err := runHooks(ctx, rm, spec, pre); err != nil {
			st.State, st.Messages = StateErrApplied, hookLines(failedPre, err)
			return st
		}
	}
	previous = withHooksKept(previous, spec.Hooks)
	desired := inventoryOf(all)
	opts := applyOptions(spec, takeOverFields)
	opts.DriftIgnoreRules = unchangedIgnoreRules(objects, previous, spec)
	first := !takeOverFields && len(st.Inventory) == 0
	apart := namespacesApart{rest: objects}
	if spec.namespacesApart {
		apart = applyNamespacesApart(ctx, rm, objects, opts)
	}
	if len(apart.refused) > 0 {
		st.Refused = apart.refused
	}
	cs, err := applySet(ctx, rm, apart.rest, opts, first)
	if cs != nil {
		cs.Append(apart.entries)
	}
	if err != nil {
		// Nothing is pruned; what this apply created before it stopped joins the inventory (read back:
		// an object the server refused is not there, and a later delete must not ask for it as an
		// identity that may not even read it: that failed every later update of a dropped bundle).
		st.State, st.Messages = StateErrApplied, append(refusals(ctx, rm, apart.rest, err), leftOutMessages(apart.leftOut, apart.refused)...)
		st.Inventory = mergeInventory(st.Inventory, existing(withUIDs(ctx, rm, desired, st.Inventory, spec.DeletePolicy.OwnerLabels)))
		return st
	}
	// The set's objects, as prune and inventory know them: a refused namespace and what lives in it keep
	// their place in the set (never pruned for it), and are in the inventory only as far as they exist.
	prune := planPrune(st.Inventory, previous, spec.set())
	left, failed := deleteObjects(ctx, rm, prune.Delete, spec.DeletePolicy, timeoutOf(spec))
	applied := withUIDs(ctx, rm, desired, st.Inventory, spec.DeletePolicy.OwnerLabels)
	if len(apart.refused) > 0 {
		applied = existing(applied)
	}
	st.Inventory = mergeInventory(left, applied)
	failed = append(failed, leftOutMessages(apart.leftOut, apart.refused)...)
	st.Retained = prune.Retained
	st.AppliedDeploymentID = spec.DeploymentID
	st.Revision++
	if len(failed) > 0 {
		st.State, st.Messages = StateErrApplied, failed
		return st
	}
	// Without helm.timeoutSeconds Fleet's agent waits for nothing, so its post hooks run right after the
	// apply; with it, after the set is ready.
	runPost := func() bool {
		if err := runHooks(ctx, rm, spec, post); err != nil {
			st.State, st.Messages = StateErrApplied, hookLines(failedPost, err)
			return false
		}
		st.HooksRunFor = spec.DeploymentID
		return true
	}
	if !hooks && len(spec.Hooks) > 0 {
		// Not a new release (or one an earlier version deployed): its hooks count as run for it.
		st.HooksRunFor = spec.DeploymentID
	}
	if hooks && spec.HookTimeoutSeconds == 0 && !runPost() {
		return st
	}
	if spec.TimeoutSeconds > 0 {
		wait := ssa.WaitOptions{Interval: waitInterval, Timeout: time.Duration(spec.TimeoutSeconds) * time.Second}
		set := waitSet(cs.ToObjMetadataSet(), rules)
		if err := waiter(ctx, rm, rules).WaitForSetWithContext(ctx, set, wait); err != nil {
			st.State, st.Messages = StateNotReady, notReady(ctx, rm, set, err, wait.Timeout, rules)
			return st
		}
	}
	if hooks && spec.HookTimeoutSeconds > 0 && !runPost() {
		return st
	}
	st.State = StateReady
	return st
}

// refusals names every object the API server refuses, with its words: the apply stops at the first,
// so each object is tried once more as a dry run (which writes nothing). Only when none is refused on
// its own (a conflict between them, a server that went away) is the apply's own error the message.
func refusals(ctx context.Context, rm *ssa.ResourceManager, objects []*unstructured.Unstructured, applyErr error) []string {
	var msgs []string
	for _, o := range objects {
		if _, _, _, err := rm.Diff(ctx, o.DeepCopy(), ssa.DefaultDiffOptions()); err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) == 0 {
		return []string{applyErr.Error()}
	}
	return msgs
}

// notReady names each awaited object that is not ready, with its health check's or kstatus's reason,
// after a wait that ended without all of them ready.
func notReady(ctx context.Context, rm *ssa.ResourceManager, set object.ObjMetadataSet, waitErr error, timeout time.Duration, rules healthRules) []string {
	var msgs []string
	for _, id := range set {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: id.GroupKind.Group, Kind: id.GroupKind.Kind, Version: versionOf(rm, id)})
		if err := rm.Client().Get(ctx, client.ObjectKey{Namespace: id.Namespace, Name: id.Name}, u); err != nil {
			msgs = append(msgs, fmt.Sprintf("%s %s: %v", id.GroupKind.Kind, qualified(id.Namespace, id.Name), err))
			continue
		}
		if line := notReadyLine(ctx, u, rules, timeout, func() []map[string]any { return podsOf(ctx, rm.Client(), u) }); line != "" {
			msgs = append(msgs, line)
		}
	}
	if len(msgs) == 0 {
		return []string{waitErr.Error()}
	}
	return msgs
}

func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// versionOf is the version the cluster serves for a kind (the wait set carries only group and kind).
func versionOf(rm *ssa.ResourceManager, id object.ObjMetadata) string {
	if m, err := rm.Client().RESTMapper().RESTMapping(id.GroupKind); err == nil {
		return m.GroupVersionKind.Version
	}
	return "v1"
}

// carriedStatus is the status an apply starts from: the last one's inventory, applied ID and revision.
func carriedStatus(prev *Outputs) (Status, map[string]DesiredObject) {
	if prev == nil {
		return Status{Inventory: []InventoryID{}}, nil
	}
	st := prev.Status
	st.Messages, st.Drifted, st.Refused = nil, nil, nil
	return st, prev.set()
}

func paused(st Status) Status {
	if st.State == "" {
		st.State = StateWaitApplied
	}
	st.Messages = []string{"paused: the bundle keeps what it has"}
	return st
}

// timeoutOf is how long the pair waits for readiness and for pruned objects to be gone.
func timeoutOf(spec Spec) time.Duration {
	if spec.TimeoutSeconds > 0 {
		return time.Duration(spec.TimeoutSeconds) * time.Second
	}
	return 10 * time.Minute
}

func applyOptions(spec Spec, takeOverFields bool) ssa.ApplyOptions {
	opts := ssa.DefaultApplyOptions()
	opts.Force = spec.Force
	opts.WaitInterval = waitInterval
	if spec.TimeoutSeconds > 0 {
		opts.WaitTimeout = time.Duration(spec.TimeoutSeconds) * time.Second
	}
	if !takeOverFields {
		return opts
	}
	for _, name := range spec.AdoptFieldManagers {
		for _, op := range []metav1.ManagedFieldsOperationType{metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate} {
			opts.Cleanup.FieldManagers = append(opts.Cleanup.FieldManagers, ssa.FieldManager{Name: name, OperationType: op})
		}
	}
	return opts
}

// unchangedIgnoreRules: the fields drift ignores (comparePatches) stay as they are on the cluster when
// an object is applied again as it was (a drift correction, a retry); a new version of it is applied
// whole, as Fleet's upgrade applies it.
func unchangedIgnoreRules(objects []*unstructured.Unstructured, previous map[string]DesiredObject, spec Spec) []jsondiff.IgnoreRule {
	var rules []jsondiff.IgnoreRule
	for _, o := range objects {
		k := keyOf(o)
		pointers := spec.set()[k].IgnoreDrift
		if before, ok := previous[k]; ok && len(pointers) > 0 && digestOf(before) == digestOf(spec.set()[k]) {
			rules = append(rules, jsondiff.IgnoreRule{Paths: pointers, Selector: exactly(o)})
		}
	}
	return rules
}

func inventoryOf(objects []*unstructured.Unstructured) []InventoryID {
	ids := make([]InventoryID, 0, len(objects))
	for _, o := range objects {
		gvk := o.GroupVersionKind()
		ids = append(ids, InventoryID{Group: gvk.Group, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName(), Version: gvk.Version})
	}
	return ids
}

// withUIDs fills each applied object's UID: from the last inventory when it had one, else read back
// (listedUIDs: one list per kind and namespace holding several, the rest one read each).
func withUIDs(ctx context.Context, rm *ssa.ResourceManager, ids []InventoryID, known []InventoryID, owner map[string]string) []InventoryID {
	uids := map[string]string{}
	for _, id := range known {
		uids[id.Key()] = id.UID
	}
	var missing []InventoryID
	for _, id := range ids {
		if uids[id.Key()] == "" {
			missing = append(missing, id)
		}
	}
	for k, uid := range listedUIDs(ctx, rm, missing, owner) {
		uids[k] = uid
	}
	out := make([]InventoryID, len(ids))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, id := range ids {
		out[i] = id
		if uid := uids[id.Key()]; uid != "" {
			out[i].UID = uid
			continue
		}
		g.Go(func() error {
			u := stub(id)
			if err := rm.Client().Get(ctx, client.ObjectKeyFromObject(u), u); err == nil {
				out[i].UID = string(u.GetUID())
			}
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// stub is an object carrying only the identity of an inventory entry.
func stub(id InventoryID) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	apiVersion := id.Version
	if id.Group != "" {
		apiVersion = id.Group + "/" + id.Version
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(id.Kind)
	u.SetNamespace(id.Namespace)
	u.SetName(id.Name)
	return u
}

// deleteObjects deletes ids under the policy and waits, at most timeout, until they are gone (a pruned
// object is gone when the update returns, as when each was its own resource). It returns the entries it
// could not delete or that are still there (they stay in the inventory), and one message per failure.
func deleteObjects(ctx context.Context, rm *ssa.ResourceManager, ids []InventoryID, policy DeletePolicy, timeout time.Duration) ([]InventoryID, []string) {
	var left, deleted []InventoryID
	var msgs []string
	policyOf, err := propagation(policy.Propagation)
	if err != nil {
		return ids, []string{err.Error()}
	}
	opts := ssa.DeleteOptions{PropagationPolicy: policyOf, Inclusions: policy.OwnerLabels}
	for _, id := range sortedForDeletion(ids) {
		entry, err := rm.Delete(ctx, stub(id), opts)
		switch {
		case err != nil && !isGone(err):
			left, msgs = append(left, id), append(msgs, err.Error())
		case err == nil && entry.Action == ssa.DeletedAction:
			deleted = append(deleted, id)
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, id := range deleted {
		err := wait.PollUntilContextCancel(waitCtx, waitInterval, true, func(ctx context.Context) (bool, error) {
			u := stub(id)
			err := rm.Client().Get(ctx, client.ObjectKeyFromObject(u), u)
			return isGone(err), nil
		})
		if err != nil {
			left, msgs = append(left, id), append(msgs, fmt.Sprintf("%s %s/%s is still terminating after %s (a finalizer?)", id.Kind, id.Namespace, id.Name, timeout))
		}
	}
	return left, msgs
}

// sortedForDeletion deletes namespaced objects before Namespaces, and CRDs last, the reverse of apply.
func sortedForDeletion(ids []InventoryID) []InventoryID {
	rank := func(id InventoryID) int {
		switch {
		case id.Kind == "CustomResourceDefinition":
			return 2
		case id.Kind == "Namespace" && id.Group == "":
			return 1
		}
		return 0
	}
	out := append([]InventoryID(nil), ids...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

func keyOf(o *unstructured.Unstructured) string {
	return objectKey(o.GroupVersionKind().Group, o.GetKind(), o.GetNamespace(), o.GetName())
}

// exactly selects this one object (the selector's fields are regular expressions).
func exactly(o *unstructured.Unstructured) *jsondiff.Selector {
	anchored := func(s string) string { return "^" + regexp.QuoteMeta(s) + "$" }
	gvk := o.GroupVersionKind()
	return &jsondiff.Selector{Group: anchored(gvk.Group), Kind: anchored(gvk.Kind), Namespace: anchored(o.GetNamespace()), Name: anchored(o.GetName())}
}

// isGone: the object, or its kind (a CRD deleted first), no longer exists.
func isGone(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err)
}

// propagation is the received policy's propagation as Kubernetes spells it; the provider has no default
// of its own (core/desired/delete-policy.ts decides), so anything else is refused.
func propagation(p string) (metav1.DeletionPropagation, error) {
	switch p {
	case "background":
		return metav1.DeletePropagationBackground, nil
	case "foreground":
		return metav1.DeletePropagationForeground, nil
	case "orphan":
		return metav1.DeletePropagationOrphan, nil
	}
	return "", fmt.Errorf("deletePolicy.propagation %q is not background, foreground or orphan", p)
}

// deletePair removes the pair: every inventory entry without a retain reason. An error (the pair
// stays in the state, so nothing is orphaned) names each object that could not be deleted.
func deletePair(ctx context.Context, rm *ssa.ResourceManager, olds Outputs) error {
	// Helm's uninstall: pre-delete hooks (a failure deletes nothing), the objects, post-delete hooks;
	// none for a pair that never had a release (held at a gate, paused, refused before its first apply).
	hooks := released(olds.Status)
	if hooks {
		if err := runHooks(ctx, rm, olds.Spec, hookPreDelete); err != nil {
			return fmt.Errorf("deleting the bundle deployment: %w", err)
		}
	}
	prune := planPrune(olds.Inventory, olds.set(), nil)
	if _, msgs := deleteObjects(ctx, rm, prune.Delete, olds.DeletePolicy, timeoutOf(olds.Spec)); len(msgs) > 0 {
		return fmt.Errorf("deleting the bundle deployment: %s", strings.Join(msgs, "; "))
	}
	if !hooks {
		return nil
	}
	if err := runHooks(ctx, rm, olds.Spec, hookPostDelete); err != nil {
		return fmt.Errorf("deleting the bundle deployment: its objects are deleted, then: %w", err)
	}
	return nil
}

// driftOf reads the inventory's objects back and compares each with what was applied (a server-side
// dry run, which writes nothing): the state becomes Modified with one message per object that
// drifted or is missing, or stays as it was. It also returns what it read of each object (its status).
func driftOf(ctx context.Context, rm *ssa.ResourceManager, olds Outputs) (Status, []map[string]any) {
	st := olds.Status
	objects, err := olds.unstructuredObjects()
	if err != nil {
		return st, nil
	}
	rules, _ := compileHealthChecks(olds.HealthChecks)
	var msgs, drifted []string
	var live []map[string]any
	var read []*unstructured.Unstructured
	for _, o := range objects {
		k := keyOf(o)
		if olds.set()[k].CreateOnly {
			// A chart's crds/ as Helm installs them: not in the release, so not in its drift either.
			continue
		}
		opts := ssa.DefaultDiffOptions()
		if pointers := olds.set()[k].IgnoreDrift; len(pointers) > 0 {
			opts.DriftIgnoreRules = []jsondiff.IgnoreRule{{Paths: pointers, Selector: exactly(o)}}
		}
		entry, _, _, err := rm.Diff(ctx, o, opts)
		switch {
		case err != nil:
			msgs, drifted = append(msgs, err.Error()), append(drifted, k)
		case entry.Action == ssa.CreatedAction:
			msgs, drifted = append(msgs, "missing "+describe(o)), append(drifted, k)
		case entry.Action == ssa.ConfiguredAction:
			msgs, drifted = append(msgs, "modified "+describe(o)), append(drifted, k)
		}
		existing := stub(InventoryID{Group: o.GroupVersionKind().Group, Version: o.GroupVersionKind().Version, Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()})
		if err := rm.Client().Get(ctx, client.ObjectKeyFromObject(existing), existing); err == nil {
			live = append(live, statusView(existing, rules))
			read = append(read, existing)
		}
	}
	st.Drifted = nil
	if st.State != StateReady && st.State != StateModified {
		return st, live
	}
	switch sick := unhealthy(ctx, read, rules); {
	case len(msgs) > 0:
		st.State, st.Messages, st.Drifted = StateModified, msgs, drifted
	case len(sick) > 0:
		// Applied as asked, but an object its kind's health check judges is not ready (any more).
		st.State, st.Messages = StateNotReady, sick
	default:
		st.State, st.Messages = StateReady, nil
	}
	// The messages were replaced: a setup's refused namespaces stay in them for the pairs that need them.
	st.Messages = append(st.Messages, refusalLines(st.Refused)...)
	return st, live
}

// describe names an object as status does: "<Kind> <namespace>/<name>".
func describe(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + qualified(o.GetNamespace(), o.GetName())
}

// statusView is what readiness needs of a live object: its identity, generation and status. An object
// whose kind has a health check says so (healthChecked): its readiness is this provider's verdict, in
// the pair's state, and `status` does not judge it again by Fleet's summary.
func statusView(o *unstructured.Unstructured, rules healthRules) map[string]any {
	meta := map[string]any{"name": o.GetName(), "generation": o.GetGeneration(), "uid": string(o.GetUID())}
	if o.GetNamespace() != "" {
		meta["namespace"] = o.GetNamespace()
	}
	view := map[string]any{"apiVersion": o.GetAPIVersion(), "kind": o.GetKind(), "metadata": meta}
	if status, ok := o.Object["status"]; ok {
		view["status"] = status
	}
	if rules.of(o.GroupVersionKind().Group, o.GetKind()) != nil {
		view["healthChecked"] = true
	}
	return view
}
