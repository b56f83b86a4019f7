package main

// Whether a live object is ready, as Fleet's agent decides it (internal/cmd/agent/deployer/monitor:
// nonReady): the conditions fleet.yaml's ignore.conditions lists are removed first, then wrangler's
// summary.Summarize judges the object: the same library and version Fleet's agent uses, rather than a
// hand-written copy of its per-kind rules.

import (
	"github.com/rancher/wrangler/v3/pkg/summary"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func readiness(job ReadinessJob) ReadinessResult {
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(job.Object); err != nil {
		return ReadinessResult{Problem: err.Error()}
	}
	if len(job.Ignore) > 0 {
		withoutIgnored(obj, job.Ignore)
	}
	sum := summary.Summarize(obj)
	return ReadinessResult{Ready: sum.IsReady(), State: sum.State, Error: sum.Error, Transitioning: sum.Transitioning, Message: sum.Message}
}

// withoutIgnored drops each condition that carries every key/value of one of the ignore maps
// (Fleet's excludeIgnoredConditions; a non-string value never matches).
func withoutIgnored(obj *unstructured.Unstructured, ignore []map[string]string) {
	conditions, found, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if err != nil || !found {
		return
	}
	kept := make([]any, 0, len(conditions))
	for _, c := range conditions {
		cond, ok := c.(map[string]any)
		if !ok || !ignored(cond, ignore) {
			kept = append(kept, c)
		}
	}
	_ = unstructured.SetNestedSlice(obj.Object, kept, "status", "conditions")
}

func ignored(cond map[string]any, ignore []map[string]string) bool {
	for _, rule := range ignore {
		if len(rule) > len(cond) {
			continue
		}
		all := true
		for k, v := range rule {
			if got, ok := cond[k].(string); !ok || got != v {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}
