package main

// The readiness wait with the operator's health checks (health.go): the kinds they name are waited
// for besides the awaited ones, and judged by their expressions through a kstatus status reader of
// their own, so fluxcd/pkg/ssa's wait (polling, timeout, early end on a failed object) stays the one
// wait.

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/engine"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/statusreaders"
	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// waitSet is what the readiness wait waits for: the awaited kinds and those with a health check.
func waitSet(applied object.ObjMetadataSet, rules healthRules) object.ObjMetadataSet {
	var set object.ObjMetadataSet
	for _, id := range applied {
		if isAwaited(id.GroupKind.Group, id.GroupKind.Kind) || rules.of(id.GroupKind.Group, id.GroupKind.Kind) != nil {
			set = append(set, id)
		}
	}
	return set
}

// waiter is the resource manager whose wait judges the checked kinds by their expressions: the
// cluster's own when there are none, else one on the same client with a poller that reads them.
func waiter(ctx context.Context, rm *ssa.ResourceManager, rules healthRules) *ssa.ResourceManager {
	if len(rules) == 0 {
		return rm
	}
	mapper := rm.Client().RESTMapper()
	reader := &healthReader{rules: rules, generic: statusreaders.NewGenericStatusReader(mapper, func(u *unstructured.Unstructured) (*kstatus.Result, error) {
		gvk := u.GroupVersionKind()
		v := rules.of(gvk.Group, gvk.Kind).judge(ctx, u.Object)
		return &kstatus.Result{Status: v.Status, Message: v.Message}, nil
	})}
	return managerOn(rm.Client(), polling.NewStatusPoller(rm.Client(), mapper, polling.Options{CustomStatusReaders: []engine.StatusReader{reader}}))
}

// healthReader is kstatus's generic reader for every kind with a health check.
type healthReader struct {
	rules   healthRules
	generic engine.StatusReader
}

func (h *healthReader) Supports(gk schema.GroupKind) bool {
	return h.rules.of(gk.Group, gk.Kind) != nil
}

func (h *healthReader) ReadStatus(ctx context.Context, r engine.ClusterReader, id object.ObjMetadata) (*event.ResourceStatus, error) {
	return h.generic.ReadStatus(ctx, r, id)
}

func (h *healthReader) ReadStatusForObject(ctx context.Context, r engine.ClusterReader, u *unstructured.Unstructured) (*event.ResourceStatus, error) {
	return h.generic.ReadStatusForObject(ctx, r, u)
}

// notReadyLine names an object the wait left not ready, by its check when its kind has one, else by
// kstatus and the object's own words (own_words.go, `pods`: a workload's); "" when it is ready.
func notReadyLine(ctx context.Context, u *unstructured.Unstructured, rules healthRules, timeout time.Duration, pods func() []map[string]any) string {
	gvk := u.GroupVersionKind()
	name := fmt.Sprintf("%s %s", gvk.Kind, qualified(u.GetNamespace(), u.GetName()))
	if kc := rules.of(gvk.Group, gvk.Kind); kc != nil {
		switch v := kc.judge(ctx, u.Object); v.Status {
		case kstatus.CurrentStatus:
			return ""
		case kstatus.FailedStatus:
			return fmt.Sprintf("%s failed: %s", name, v.Message)
		default:
			return fmt.Sprintf("%s is not ready after the timeout of %s: %s: %s", name, timeout, v.Status, v.Message)
		}
	}
	if r, err := kstatus.Compute(u); err == nil && r.Status != kstatus.CurrentStatus {
		line := fmt.Sprintf("%s is not ready after the timeout of %s: %s: %s", name, timeout, r.Status, r.Message)
		if words := ownWords(u.Object, pods()); words != "" {
			line += " (" + words + ")"
		}
		return line
	}
	return ""
}

// unhealthy names each live object whose kind has a check and that is not Current by it (a refresh).
func unhealthy(ctx context.Context, live []*unstructured.Unstructured, rules healthRules) []string {
	var msgs []string
	for _, u := range live {
		gvk := u.GroupVersionKind()
		kc := rules.of(gvk.Group, gvk.Kind)
		if kc == nil {
			continue
		}
		if v := kc.judge(ctx, u.Object); v.Status != kstatus.CurrentStatus {
			msgs = append(msgs, fmt.Sprintf("%s %s: %s: %s", gvk.Kind, qualified(u.GetNamespace(), u.GetName()), v.Status, v.Message))
		}
	}
	return msgs
}
