package main

// A refresh of a pair whose objects are in a BundleContent: Read has no program, so the content comes
// from the operation's hand-over (content.go). Without it (a plain `pulumi refresh`) nothing is
// compared field by field: inventing drift from manifests it does not have would re-apply every pair.

import (
	"context"
	"fmt"

	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// refreshed is a pair's status after a refresh, and what it read of each object.
func (s *server) refreshed(rm *ssa.ResourceManager, urn string, olds Outputs) (Status, []map[string]any) {
	if olds.Content == "" {
		return driftOf(s.ctx, rm, olds)
	}
	err := withContent(urn, &olds.Spec)
	if err != nil && stash.handedOver() == nil {
		err = withContent(urn, &olds.Spec)
	}
	if err == nil {
		return driftOf(s.ctx, rm, olds)
	}
	return existenceOf(s.ctx, rm, olds)
}

// existenceOf checks, without the content, that each object of the set is on the cluster: a missing
// one is drift (Modified), as driftOf says it; the fields are not compared, and the messages say so.
func existenceOf(ctx context.Context, rm *ssa.ResourceManager, olds Outputs) (Status, []map[string]any) {
	st := olds.Status
	rules, _ := compileHealthChecks(olds.HealthChecks)
	var msgs, drifted []string
	var live []map[string]any
	var read []*unstructured.Unstructured
	set := olds.set()
	for _, k := range sortedKeys(set) {
		u := &unstructured.Unstructured{Object: set[k].identity(k)}
		existing := stub(InventoryID{Group: u.GroupVersionKind().Group, Version: u.GroupVersionKind().Version, Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()})
		if err := rm.Client().Get(ctx, client.ObjectKeyFromObject(existing), existing); err != nil {
			if client.IgnoreNotFound(err) == nil {
				msgs, drifted = append(msgs, "missing "+describe(u)), append(drifted, k)
			} else {
				msgs, drifted = append(msgs, err.Error()), append(drifted, k)
			}
			continue
		}
		live = append(live, statusView(existing, rules))
		read = append(read, existing)
	}
	st.Drifted = nil
	notCompared := fmt.Sprintf("fields not compared: this refresh was not given the bundle's content %s (the state keeps each render once, in a BundleContent resource, and a plain `pulumi refresh` does not hand it to the provider); only each object's presence was checked: run `npm run up -- --refresh` or `npm run redeploy` to compare", olds.Content)
	if st.State != StateReady && st.State != StateModified {
		return st, live
	}
	switch sick := unhealthy(ctx, read, rules); {
	case len(msgs) > 0:
		st.State, st.Messages, st.Drifted = StateModified, msgs, drifted
	case len(sick) > 0:
		st.State, st.Messages = StateNotReady, sick
	default:
		st.State, st.Messages = StateReady, nil
	}
	st.Messages = append(append(st.Messages, notCompared), refusalLines(st.Refused)...)
	return st, live
}

// checkObjects: a set with content holds each object's identity and digest (the content's Check checks
// the manifests); a set without holds the manifests, checked as the set applied.
func (s Spec) checkObjects() error {
	if s.Content == "" {
		_, err := s.unstructuredObjects()
		return err
	}
	for _, k := range sortedKeys(s.Objects) {
		o := s.Objects[k]
		if o.Manifest != nil || o.Digest == "" || o.APIVersion == "" {
			return fmt.Errorf("object %s: a set with content %s holds each object's apiVersion and digest, not its manifest", k, s.Content)
		}
		u := &unstructured.Unstructured{Object: o.identity(k)}
		if got := objectKey(groupOf(u.GetAPIVersion()), u.GetKind(), u.GetNamespace(), u.GetName()); got != k {
			return fmt.Errorf("object %s: its apiVersion %s is of another group", k, o.APIVersion)
		}
	}
	_, err := unstructuredOf(s.SecretObjects)
	return err
}
