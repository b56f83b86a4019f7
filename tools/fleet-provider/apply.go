package main

// Acting on a cluster: the pair's apply (fluxcd/pkg/ssa's staged server-side apply, the prune its
// decision in decide.go asks for, the readiness wait with kstatus) and the pair's deletion. Every
// failure becomes the pair's status; nothing here returns an error to the engine except a deletion
// that could not finish, which keeps the pair in the state so nothing is orphaned.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/pkg/ssa"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// How often kstatus polls while waiting for readiness.
const waitInterval = 500 * time.Millisecond

// applyPair applies spec on the cluster and returns the pair's new status. prev is the pair's last
// outputs (nil when new): its inventory is what a prune may delete. takeOverFields: move the fields of
// spec.AdoptFieldManagers to this provider's field manager (a metadata write on each such object).
func applyPair(ctx context.Context, rm *ssa.ResourceManager, prev *Outputs, spec Spec, takeOverFields bool) Status {
	st, previous := carriedStatus(prev)
	if spec.Paused {
		return paused(st)
	}
	if msg := gateMessage(spec.WaitFor); msg != "" {
		st.State, st.Messages = StateWaitApplied, []string{msg}
		return st
	}
	objects, err := spec.unstructuredObjects()
	if err != nil {
		st.State, st.Messages = StateErrApplied, []string{err.Error()}
		return st
	}
	desired := inventoryOf(objects)
	cs, err := rm.ApplyAllStaged(ctx, objects, applyOptions(spec, takeOverFields))
	if err != nil {
		// Nothing is pruned; what the set holds joins the inventory, so a later prune finds what this
		// apply may have created before it stopped.
		st.State, st.Messages = StateErrApplied, []string{err.Error()}
		st.Inventory = mergeInventory(st.Inventory, desired)
		return st
	}
	prune := planPrune(st.Inventory, previous, spec.Objects)
	left, deleteMsgs := deleteObjects(ctx, rm, prune.Delete, spec.DeletePolicy)
	st.Inventory = mergeInventory(left, withUIDs(ctx, rm, desired, st.Inventory))
	st.Retained = prune.Retained
	st.AppliedDeploymentID = spec.DeploymentID
	st.Revision++
	if len(deleteMsgs) > 0 {
		st.State, st.Messages = StateErrApplied, deleteMsgs
		return st
	}
	if spec.TimeoutSeconds > 0 {
		wait := ssa.WaitOptions{Interval: waitInterval, Timeout: time.Duration(spec.TimeoutSeconds) * time.Second}
		if err := rm.WaitForSetWithContext(ctx, cs.ToObjMetadataSet(), wait); err != nil {
			st.State, st.Messages = StateNotReady, []string{err.Error()}
			return st
		}
	}
	st.State = StateReady
	return st
}

// carriedStatus is the status an apply starts from: the last one's inventory, applied ID and revision.
func carriedStatus(prev *Outputs) (Status, map[string]DesiredObject) {
	if prev == nil {
		return Status{Inventory: []InventoryID{}}, nil
	}
	st := prev.Status
	st.Messages = nil
	return st, prev.Objects
}

func paused(st Status) Status {
	if st.State == "" {
		st.State = StateWaitApplied
	}
	st.Messages = []string{"paused: the bundle keeps what it has"}
	return st
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

func inventoryOf(objects []*unstructured.Unstructured) []InventoryID {
	ids := make([]InventoryID, 0, len(objects))
	for _, o := range objects {
		gvk := o.GroupVersionKind()
		ids = append(ids, InventoryID{Group: gvk.Group, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName(), Version: gvk.Version})
	}
	return ids
}

// withUIDs fills each applied object's UID: from the last inventory when it had one, else read back.
func withUIDs(ctx context.Context, rm *ssa.ResourceManager, ids []InventoryID, known []InventoryID) []InventoryID {
	uids := map[string]string{}
	for _, id := range known {
		uids[id.Key()] = id.UID
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

// deleteObjects deletes ids under the policy. It returns the entries it could not delete (they stay
// in the inventory) and one message per failure.
func deleteObjects(ctx context.Context, rm *ssa.ResourceManager, ids []InventoryID, policy DeletePolicy) ([]InventoryID, []string) {
	opts := ssa.DeleteOptions{PropagationPolicy: propagation(policy.Propagation), Inclusions: policy.OwnerLabels}
	var left []InventoryID
	var msgs []string
	for _, id := range sortedForDeletion(ids) {
		if _, err := rm.Delete(ctx, stub(id), opts); err != nil && !isGone(err) {
			left = append(left, id)
			msgs = append(msgs, err.Error())
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

// isGone: the object, or its kind (a CRD deleted first), no longer exists.
func isGone(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err)
}

func propagation(p string) metav1.DeletionPropagation {
	switch p {
	case "foreground":
		return metav1.DeletePropagationForeground
	case "orphan":
		return metav1.DeletePropagationOrphan
	}
	return metav1.DeletePropagationBackground
}

// deletePair removes the pair: every inventory entry without a retain reason. An error (the pair
// stays in the state, so nothing is orphaned) names each object that could not be deleted.
func deletePair(ctx context.Context, rm *ssa.ResourceManager, olds Outputs) error {
	prune := planPrune(olds.Inventory, olds.Objects, nil)
	if _, msgs := deleteObjects(ctx, rm, prune.Delete, olds.DeletePolicy); len(msgs) > 0 {
		return fmt.Errorf("deleting the bundle deployment: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// driftOf reads the inventory's objects back and compares each with what was applied (a server-side
// dry run, which writes nothing): the state becomes Modified with one message per object that
// drifted or is missing, or stays as it was.
func driftOf(ctx context.Context, rm *ssa.ResourceManager, olds Outputs) Status {
	st := olds.Status
	if st.State != StateReady && st.State != StateModified {
		return st
	}
	objects, err := olds.unstructuredObjects()
	if err != nil {
		return st
	}
	var msgs []string
	for _, o := range objects {
		entry, _, _, err := rm.Diff(ctx, o, ssa.DefaultDiffOptions())
		switch {
		case err != nil:
			msgs = append(msgs, err.Error())
		case entry.Action == ssa.CreatedAction:
			msgs = append(msgs, entry.Subject+" is missing")
		case entry.Action == ssa.ConfiguredAction:
			msgs = append(msgs, entry.Subject+" is modified")
		}
	}
	if len(msgs) > 0 {
		st.State, st.Messages = StateModified, msgs
	} else {
		st.State, st.Messages = StateReady, nil
	}
	return st
}
