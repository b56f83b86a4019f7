package main

// Kubernetes Events on the downstream cluster when a pair's state changes (the stack file's
// notifications.kubernetesEvents, received as the pair's `kubernetesEvents` input only when on): what
// `kubectl get events -n <namespace>` shows a team that never sees the runner's output. One Event per
// state change, on the Namespace the bundle deploys into (it exists whatever was refused, and one
// bundle's objects are many; the message names each), posted with the pair's own client and a short
// timeout. The decision (eventFor) is pure; postEvent acts; an Event that cannot be posted (RBAC, a
// namespace that is not there) is a warning in the pair's messages, never a failure of the pair.
//
// client-go's event recorders (tools/record, tools/events) are made for long-running controllers: they
// queue, aggregate in memory and retry in the background, and report nothing back. A pair is one
// short call that must know whether its Event was posted, so it is one create, synchronous and bounded;
// the same words again (the same Event name) raise its count as the recorders' aggregation would.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// The Event's reportingComponent and source: who says it.
	eventReporter = "pulumi-fleet"
	actionApply   = "Apply"
	actionRefresh = "Refresh"
	// An Event is one request (two when its words repeat); it must not hold the pair up.
	eventTimeout = 10 * time.Second
	// The API server refuses a longer message (an Event's note).
	maxEventMessage = 1024
)

// pairEvent is what an Event says.
type pairEvent struct {
	Type    string // Normal or Warning
	Reason  string // Fleet's state: Deployed, ErrApplied, NotReady, Modified
	Action  string // Apply or Refresh
	Message string
}

// eventFor decides the Event a pair's new state gives, or nil: Deployed when an apply reached Ready with
// a deploymentId it did not hold Ready before (a first deploy, a new one, a recovery, drift put back);
// ErrApplied and NotReady when an apply ends so with other words than the pair last had; Modified when
// a refresh finds drift not recorded yet. A pair held by a gate or paused applied nothing: no Event.
func eventFor(action string, before *Status, after Status, spec Spec) *pairEvent {
	on := spec.KubernetesEvents
	if on == nil {
		return nil
	}
	var was Status
	if before != nil {
		was = *before
	}
	bundle := "bundle " + on.Bundle
	if on.GitRepo != "" {
		bundle += " of GitRepo " + on.GitRepo
	}
	words := strings.Join(after.Messages, "; ")
	sameWords := was.State == after.State && slices.Equal(was.Messages, after.Messages)
	switch action {
	case actionApply:
		if spec.Paused || gateMessage(spec.WaitFor) != "" {
			return nil
		}
		switch after.State {
		case StateReady:
			if was.State == StateReady && was.AppliedDeploymentID == after.AppliedDeploymentID {
				return nil
			}
			return &pairEvent{Type: corev1.EventTypeNormal, Reason: "Deployed", Action: action, Message: fmt.Sprintf("Deployed %s deploymentID=%s", bundle, after.AppliedDeploymentID)}
		case StateErrApplied:
			if sameWords {
				return nil
			}
			return &pairEvent{Type: corev1.EventTypeWarning, Reason: StateErrApplied, Action: action, Message: fmt.Sprintf("Applying %s deploymentID=%s failed: %s", bundle, spec.DeploymentID, words)}
		case StateNotReady:
			if sameWords {
				return nil
			}
			return &pairEvent{Type: corev1.EventTypeWarning, Reason: StateNotReady, Action: action, Message: fmt.Sprintf("%s deploymentID=%s is not ready: %s", capitalized(bundle), after.AppliedDeploymentID, words)}
		}
	case actionRefresh:
		if after.State == StateModified && !sameWords {
			return &pairEvent{Type: corev1.EventTypeWarning, Reason: StateModified, Action: action, Message: fmt.Sprintf("%s was changed on the cluster: %s", capitalized(bundle), words)}
		}
	}
	return nil
}

func capitalized(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// eventObject is the core/v1 Event for e, named by the pair and the reason (a Warning's same reason
// again, whatever its words, is the same Event, counted and its message updated; a deploy's by its
// words); its message through eventText. Both the legacy fields (source, timestamps, count: what `kubectl get events` and
// `kubectl describe` print) and events.k8s.io/v1's (reportingComponent, reportingInstance, action, eventTime).
func eventObject(on EventsSpec, e pairEvent, instance string, now time.Time) *corev1.Event {
	// A failure or drift is one Event per pair and reason: its words (content's, an API server quoting
	// the object) changing update it, never add one. A deploy is one per deploymentID, as before.
	identity := []string{on.GitRepo, on.Bundle, e.Reason}
	if e.Type == corev1.EventTypeNormal {
		identity = append(identity, e.Message)
	}
	sum := sha256.Sum256([]byte(strings.Join(identity, "\x00")))
	name := on.Bundle
	if len(name) > 200 {
		name = name[:200]
	}
	labels := map[string]string{}
	for k, v := range map[string]string{"fleet.cattle.io/bundle-name": on.Bundle, "fleet.cattle.io/repo-name": on.GitRepo} {
		if v != "" && len(validation.IsValidLabelValue(v)) == 0 {
			labels[k] = v
		}
	}
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: name + "." + hex.EncodeToString(sum[:8]), Namespace: on.Namespace, Labels: labels},
		// The Namespace is cluster-scoped; naming it as the involved object's namespace too keeps the Event
		// in that namespace (the API server asks that the two agree), where the team lists its events.
		InvolvedObject:      corev1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: on.Namespace, Namespace: on.Namespace},
		Type:                e.Type,
		Reason:              e.Reason,
		Message:             eventText(e.Message),
		Action:              e.Action,
		Source:              corev1.EventSource{Component: eventReporter},
		ReportingController: eventReporter,
		ReportingInstance:   cut(instance, 128),
		FirstTimestamp:      metav1.NewTime(now),
		LastTimestamp:       metav1.NewTime(now),
		EventTime:           metav1.NewMicroTime(now),
		Count:               1,
	}
}

// cut keeps at most n bytes of s, whole characters only, marking a cut with "...".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n-3]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "..."
}

// postEvent creates the Event, or raises the count of the one of the same pair and reason and updates its message. Bounded by eventTimeout.
func postEvent(ctx context.Context, c client.Client, ev *corev1.Event, now time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, eventTimeout)
	defer cancel()
	err := c.Create(ctx, ev)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing := &corev1.Event{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(ev), existing); err != nil {
		return err
	}
	existing.Count++
	existing.LastTimestamp = metav1.NewTime(now)
	existing.Message = ev.Message
	return c.Update(ctx, existing)
}

// announced is after, with a warning among its messages when its Event could not be posted.
func announced(ctx context.Context, c client.Client, action string, before *Status, after Status, spec Spec) Status {
	e := eventFor(action, before, after, spec)
	if e == nil {
		return after
	}
	now := time.Now()
	if err := postEvent(ctx, c, eventObject(*spec.KubernetesEvents, *e, reportingInstance(), now), now); err != nil {
		after.Messages = append(slices.Clone(after.Messages), fmt.Sprintf("warning: the Kubernetes Event %s was not posted in namespace %s: %v", e.Reason, spec.KubernetesEvents.Namespace, err))
	}
	return after
}

// reportingInstance names the runner that posted (its host name), as a controller names its pod.
func reportingInstance() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return eventReporter + "@" + h
	}
	return eventReporter
}
