package main

// An object's own words on why it is not ready, beside kstatus's verdict: kstatus says a Deployment
// is "InProgress: Pending termination: 1", its pod says "0/1 nodes are available: 1 Insufficient cpu".
// ownWords is pure; podsOf reads a workload's pods (a bounded list) for it.

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxWords bounds each message taken from the cluster (content names the images and objects in it).
const maxWords = 300

// maxPods bounds the pods read of one workload.
const maxPods = 20

// workloads are the kinds whose pods say why they are not ready.
var workloads = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicaSet": true, "Job": true}

// ownWords is what the object, or the first of its pods that says anything, says about why it is not
// ready; "" when they say nothing kstatus did not.
func ownWords(obj map[string]any, pods []map[string]any) string {
	if kind, _ := obj["kind"].(string); kind == "Pod" {
		return podWords(obj)
	}
	var words []string
	for _, c := range conditions(obj) {
		// A Deployment's: its ReplicaSet could not create pods (quota, admission), or its rollout stalled.
		if (c.kind == "ReplicaFailure" && c.status == "True") || (c.kind == "Progressing" && c.status == "False") {
			words = append(words, c.said())
		}
	}
	for _, p := range pods {
		if w := podWords(p); w != "" {
			name, _, _ := unstructured.NestedString(p, "metadata", "name")
			words = append(words, fmt.Sprintf("pod %s: %s", name, w))
			break
		}
	}
	return strings.Join(words, "; ")
}

// podWords: why a pod is not running: not scheduled, or a container waiting or failing, with the reason and message the kubelet or scheduler gave.
func podWords(pod map[string]any) string {
	for _, c := range conditions(pod) {
		if c.kind == "PodScheduled" && c.status == "False" {
			return c.said()
		}
	}
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		statuses, _, _ := unstructured.NestedSlice(pod, "status", field)
		for _, s := range statuses {
			m, _ := s.(map[string]any)
			name, _ := m["name"].(string)
			reason, _, _ := unstructured.NestedString(m, "state", "waiting", "reason")
			message, _, _ := unstructured.NestedString(m, "state", "waiting", "message")
			// Created or initialised in the normal course: nothing wrong yet.
			if reason != "" && reason != "ContainerCreating" && reason != "PodInitializing" {
				return bounded(fmt.Sprintf("container %s: %s", name, joinSaid(reason, message)))
			}
			if code, found, _ := unstructured.NestedInt64(m, "lastState", "terminated", "exitCode"); found && code != 0 {
				reason, _, _ := unstructured.NestedString(m, "lastState", "terminated", "reason")
				return bounded(fmt.Sprintf("container %s: last run ended with exit code %d%s", name, code, map[bool]string{true: " (" + reason + ")", false: ""}[reason != ""]))
			}
		}
	}
	return ""
}

type condition struct{ kind, status, reason, message string }

func (c condition) said() string {
	return bounded(fmt.Sprintf("%s: %s", c.kind, joinSaid(c.reason, c.message)))
}

func joinSaid(reason, message string) string {
	switch {
	case reason == "":
		return message
	case message == "":
		return reason
	}
	return reason + ": " + message
}

func conditions(obj map[string]any) []condition {
	list, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	var out []condition
	for _, x := range list {
		m, _ := x.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, condition{str("type"), str("status"), str("reason"), str("message")})
	}
	return out
}

func bounded(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxWords {
		return s[:maxWords] + "…"
	}
	return s
}

// podsOf reads up to maxPods pods of a workload, by its selector's labels; none for other kinds or on a read error.
func podsOf(ctx context.Context, c client.Client, u *unstructured.Unstructured) []map[string]any {
	if !workloads[u.GetKind()] {
		return nil
	}
	labels, found, _ := unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
	if !found || len(labels) == 0 {
		return nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("v1")
	list.SetKind("PodList")
	if err := c.List(ctx, list, client.InNamespace(u.GetNamespace()), client.MatchingLabels(labels), client.Limit(maxPods)); err != nil {
		return nil
	}
	pods := make([]map[string]any, 0, len(list.Items))
	for _, p := range list.Items {
		pods = append(pods, p.Object)
	}
	return pods
}
