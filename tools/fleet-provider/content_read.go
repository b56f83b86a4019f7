package main

// A refresh of a pair whose objects are in a BundleContent: Read has no program, so the content comes
// from the operation's hand-over (content.go). Without it (a plain `pulumi refresh`) nothing is
// compared field by field: inventing drift from manifests it does not have would re-apply every pair.

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
	if err == nil {
		return driftOf(s.ctx, rm, olds)
	}
	fileErr := stash.handedOver()
	if err = withContent(urn, &olds.Spec); err == nil {
		return driftOf(s.ctx, rm, olds)
	}
	why := errors.Join(fileErr, stash.refusedContent(olds.Content))
	if why == nil && stash.get(olds.Content) != nil {
		why = err // the content was loaded, and does not fit this pair
	}
	return existenceOf(s.ctx, rm, olds, notComparedLine(olds.Content, why))
}

const notComparedLead = "fields not compared: "

// notComparedLine says why the fields were not compared: the content was not handed over (a plain
// `pulumi refresh`), or it was and failed (its own error, the hand-over file's, or the pair's own with it).
func notComparedLine(digest string, refused error) string {
	why := fmt.Sprintf("this refresh was not given the bundle's content %s (the state keeps each render once, in a BundleContent resource, and a plain `pulumi refresh` does not hand it to the provider)", digest)
	if refused != nil {
		why = fmt.Sprintf("the bundle's content %s handed over for this refresh could not be used: %v", digest, refused)
	}
	return notComparedLead + why + "; only each object's presence was checked: run `npm run up -- --refresh` or `npm run redeploy` to compare"
}

// existenceOf checks, without the content, that each object of the set is on the cluster: a missing
// one is drift (Modified), as driftOf says it; the fields are not compared, and the messages say so,
// so drift an earlier full comparison recorded stays (presenceOnly).
func existenceOf(ctx context.Context, rm *ssa.ResourceManager, olds Outputs, notCompared string) (Status, []map[string]any) {
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
	if st.State != StateReady && st.State != StateModified {
		st.Drifted = nil
		return st, live
	}
	return presenceOnly(st, msgs, drifted, unhealthy(ctx, read, rules), notCompared), live
}

// presenceOnly is a Ready or Modified pair's status after a check of its objects' presence alone. A
// missing object is drift; the fields were not compared, so they cannot clear drift a full comparison
// recorded: a Modified pair stays Modified, with its drifted objects and what was found of them.
func presenceOnly(prev Status, missing, missingKeys, sick []string, notCompared string) Status {
	st := prev
	var earlier, drifted []string
	if prev.State == StateModified {
		earlier, drifted = findingsOf(prev), prev.Drifted
	}
	switch {
	case len(missing) > 0:
		st.State, st.Messages, st.Drifted = StateModified, union(missing, earlier), union(missingKeys, drifted)
	case prev.State == StateModified:
		st.Messages = earlier
	case len(sick) > 0:
		st.State, st.Messages, st.Drifted = StateNotReady, sick, nil
	default:
		st.State, st.Messages, st.Drifted = StateReady, nil, nil
	}
	st.Messages = append(append(st.Messages, notCompared), refusalLines(st.Refused)...)
	return st
}

// findingsOf are a status's own messages, without the lines presenceOnly appends again.
func findingsOf(st Status) []string {
	appended := map[string]bool{}
	for _, line := range refusalLines(st.Refused) {
		appended[line] = true
	}
	var out []string
	for _, m := range st.Messages {
		if !appended[m] && !strings.HasPrefix(m, notComparedLead) {
			out = append(out, m)
		}
	}
	return out
}

// union is a's lines, then b's not already in a.
func union(a, b []string) []string {
	seen := make(map[string]bool, len(a))
	out := append([]string(nil), a...)
	for _, x := range a {
		seen[x] = true
	}
	for _, x := range b {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
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
