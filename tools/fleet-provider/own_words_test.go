package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func unschedulablePod(name string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name, "namespace": "ns"},
		"status": map[string]any{"phase": "Pending", "conditions": []any{
			map[string]any{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
		}},
	}
}

func TestOwnWordsOfAPodThatCannotBeScheduled(t *testing.T) {
	got := ownWords(unschedulablePod("web-1"), nil)
	want := "PodScheduled: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestOwnWordsOfAWorkloadNameItsFirstPodThatSaysAnything(t *testing.T) {
	running := map[string]any{"metadata": map[string]any{"name": "web-0"}, "status": map[string]any{"phase": "Running"}}
	pulling := map[string]any{"metadata": map[string]any{"name": "web-2"}, "status": map[string]any{"containerStatuses": []any{
		map[string]any{"name": "app", "state": map[string]any{"waiting": map[string]any{"reason": "ImagePullBackOff", "message": "Back-off pulling image \"nope:1\""}}},
	}}}
	deployment := map[string]any{"kind": "Deployment", "status": map[string]any{"conditions": []any{
		map[string]any{"type": "Available", "status": "False", "message": "Deployment does not have minimum availability."},
		map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": "ReplicaSet \"web-7f\" has timed out progressing."},
	}}}
	got := ownWords(deployment, []map[string]any{running, pulling, unschedulablePod("web-1")})
	want := "Progressing: ProgressDeadlineExceeded: ReplicaSet \"web-7f\" has timed out progressing.; pod web-2: container app: ImagePullBackOff: Back-off pulling image \"nope:1\""
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if w := ownWords(map[string]any{"kind": "Deployment"}, []map[string]any{running}); w != "" {
		t.Fatalf("a workload whose pods say nothing: got %q", w)
	}
}

func TestOwnWordsAreBounded(t *testing.T) {
	pod := unschedulablePod("p")
	pod["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["message"] = strings.Repeat("x\n", 5000)
	if got := ownWords(pod, nil); len(got) > maxWords+len("…") || strings.Contains(got, "\n") {
		t.Fatalf("not bounded to one line of %d: %d characters", maxWords, len(got))
	}
}

func TestNotReadyLineAddsTheObjectsOwnWordsToKstatus(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "generation": int64(2)},
		"spec":     map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}},
		"status": map[string]any{"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1),
			"conditions": []any{map[string]any{"type": "Available", "status": "True"}, map[string]any{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"}}},
	}}
	line := notReadyLine(context.Background(), u, nil, time.Minute, func() []map[string]any { return []map[string]any{unschedulablePod("web-new")} })
	want := "Deployment ns/web is not ready after the timeout of 1m0s: InProgress: Pending termination: 1 (pod web-new: PodScheduled: Unschedulable: 0/1 nodes are available"
	if !strings.HasPrefix(line, want) {
		t.Fatalf("got %q, want a line starting %q", line, want)
	}
}
