package main

// How a set is applied and its UIDs read. fluxcd/pkg/ssa's ApplyAll reads, dry-runs and then applies
// each object, the applies one after another, so a 500-object set took several times kubectl's time.
// The set keeps ssa's stages (cluster definitions, classes, custom stage kinds first, each stage ready
// before the next; a kind a CRD of the set defines also served, kindsServed). Its last stage is, on a pair's first apply, applied directly: one server-side apply
// per object, several at once (there is no earlier apply to compare with, no drift to keep and no field
// manager to take over, which is what ssa's read and dry run are for); otherwise ssa applies it, in
// chunks at once when it is large.

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// A last stage of up to this many objects is one ApplyAll, as ssa applies it: a refusal of any of
	// them (its dry run) applies none. A larger one is applied in chunks at once, where a refusal in one
	// chunk leaves what the others applied, as Helm's install leaves what it created before a failure.
	chunkedAbove = 64
	// How many chunks at once (the provider's ssa concurrency).
	applyChunks = 8
	// How many objects a first apply applies at once.
	directAtOnce = 16
)

// applySet applies the objects as ssa's ApplyAllStaged does, the last stage directly when first (a
// pair's first apply, not forced, with no drift rule or field manager to honour), else in chunks when
// it is large.
func applySet(ctx context.Context, rm *ssa.ResourceManager, objects []*unstructured.Unstructured, opts ssa.ApplyOptions, first bool) (*ssa.ChangeSet, error) {
	var staged, rest []*unstructured.Unstructured
	for _, o := range objects {
		if utils.IsClusterDefinition(o) || utils.IsClassDefinition(o) || utils.IsCustomStage(o, opts.CustomStageKinds) {
			staged = append(staged, o)
		} else {
			rest = append(rest, o)
		}
	}
	direct := first && !opts.Force && len(opts.DriftIgnoreRules) == 0 && len(opts.Cleanup.FieldManagers) == 0
	defined := definedKindsUsed(staged, rest)
	if !direct && len(rest) <= chunkedAbove && len(defined) == 0 {
		return rm.ApplyAllStaged(ctx, objects, opts)
	}
	cs := ssa.NewChangeSet()
	if len(staged) > 0 {
		before, err := rm.ApplyAllStaged(ctx, staged, opts)
		if before != nil {
			cs.Append(before.Entries)
		}
		if err != nil {
			return cs, err
		}
		if err := kindsServed(ctx, rm, defined, opts.WaitTimeout); err != nil {
			return cs, err
		}
	}
	if direct {
		applied, err := applyDirect(ctx, rm, rest)
		cs.Append(applied)
		return cs, err
	}
	chunks := [][]*unstructured.Unstructured{rest}
	if len(rest) > chunkedAbove {
		chunks = chunksOf(rest, applyChunks)
	}
	results := make([]*ssa.ChangeSet, len(chunks))
	var g errgroup.Group
	for i, chunk := range chunks {
		g.Go(func() error {
			r, err := rm.ApplyAll(ctx, chunk, opts)
			results[i] = r
			return err
		})
	}
	err := g.Wait()
	for _, r := range results {
		if r != nil {
			cs.Append(r.Entries)
		}
	}
	return cs, err
}

// definedKindsUsed are the kinds the set's CustomResourceDefinitions define that its other objects
// use, as those objects name them (group, version, kind).
func definedKindsUsed(staged, rest []*unstructured.Unstructured) []schema.GroupVersionKind {
	defined := map[schema.GroupKind]bool{}
	for _, o := range staged {
		if o.GetKind() != "CustomResourceDefinition" || groupOf(o.GetAPIVersion()) != "apiextensions.k8s.io" {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		defined[schema.GroupKind{Group: group, Kind: kind}] = true
	}
	seen := map[schema.GroupVersionKind]bool{}
	var used []schema.GroupVersionKind
	for _, o := range rest {
		gvk := o.GroupVersionKind()
		if defined[gvk.GroupKind()] && !seen[gvk] {
			seen[gvk] = true
			used = append(used, gvk)
		}
	}
	return used
}

// kindsServed waits, at most timeout, until the client maps each kind. An API server marks a CRD
// Established before its discovery serves the kind, and the client's REST mapper reads discovery: a
// pair's first apply of a CRD and a resource of it failed now and then with "no matches for kind"
// (found by the live tests). Each try of the mapper reads discovery again.
func kindsServed(ctx context.Context, rm *ssa.ResourceManager, kinds []schema.GroupVersionKind, timeout time.Duration) error {
	mapper := rm.Client().RESTMapper()
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, gvk := range kinds {
		var last error
		err := wait.PollUntilContextCancel(waitCtx, waitInterval, true, func(context.Context) (bool, error) {
			_, last = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			return last == nil, nil
		})
		if err != nil {
			return fmt.Errorf("%s is defined by a CustomResourceDefinition of this set, established, but the API server does not serve it after %s: %v", gvk, timeout, last)
		}
	}
	return nil
}

// applyDirect applies each object once, as ssa applies (forced, as this provider's field manager),
// directAtOnce at a time, and returns the entries of those applied.
func applyDirect(ctx context.Context, rm *ssa.ResourceManager, objects []*unstructured.Unstructured) ([]ssa.ChangeSetEntry, error) {
	done := make([]bool, len(objects))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(directAtOnce)
	for i, o := range objects {
		g.Go(func() error {
			if err := rm.Client().Patch(gctx, o.DeepCopy(), client.Apply, client.ForceOwnership, client.FieldOwner(fieldManager)); err != nil {
				return fmt.Errorf("%s apply failed: %w", utils.FmtUnstructured(o), err)
			}
			done[i] = true
			return nil
		})
	}
	err := g.Wait()
	var entries []ssa.ChangeSetEntry
	for i, o := range objects {
		if done[i] {
			entries = append(entries, ssa.ChangeSetEntry{ObjMetadata: object.UnstructuredToObjMetadata(o), GroupVersion: o.GroupVersionKind().Version, Subject: utils.FmtUnstructured(o), Action: ssa.CreatedAction})
		}
	}
	return entries, err
}

// chunksOf splits objects into at most n chunks of nearly equal size, in order.
func chunksOf(objects []*unstructured.Unstructured, n int) [][]*unstructured.Unstructured {
	size := (len(objects) + n - 1) / n
	var out [][]*unstructured.Unstructured
	for start := 0; start < len(objects); start += size {
		out = append(out, objects[start:min(start+size, len(objects))])
	}
	return out
}

// listedUIDs reads the UIDs of many objects of one kind and namespace with one list, narrowed by the
// labels every object of the set carries: one request instead of one per object. What the list does
// not hold is left to a read of its own.
func listedUIDs(ctx context.Context, rm *ssa.ResourceManager, ids []InventoryID, selector map[string]string) map[string]string {
	type group struct {
		gvk       schema.GroupVersionKind
		namespace string
	}
	byGroup := map[group]int{}
	for _, id := range ids {
		byGroup[group{schema.GroupVersionKind{Group: id.Group, Version: id.Version, Kind: id.Kind}, id.Namespace}]++
	}
	uids := map[string]string{}
	for g, count := range byGroup {
		if count < 2 {
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(g.gvk.GroupVersion().WithKind(g.gvk.Kind + "List"))
		opts := []client.ListOption{client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(selector)}}
		if g.namespace != "" {
			opts = append(opts, client.InNamespace(g.namespace))
		}
		if err := rm.Client().List(ctx, list, opts...); err != nil {
			continue
		}
		for _, item := range list.Items {
			uids[objectKey(g.gvk.Group, g.gvk.Kind, item.GetNamespace(), item.GetName())] = string(item.GetUID())
		}
	}
	return uids
}
