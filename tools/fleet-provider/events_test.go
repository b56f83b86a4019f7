package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func eventsOn(s Spec) Spec {
	s.KubernetesEvents = &EventsSpec{Namespace: "web", GitRepo: "apps", Bundle: "web"}
	return s
}

// Which state change gives which Event: one per change, none for a state that stays as it was.
func TestEventForEachStateChange(t *testing.T) {
	s := eventsOn(spec("s-1:a", nil))
	refused := []string{`ConfigMap web/settings: admission denied: no "bad" key`}
	st := func(state, applied string, msgs ...string) *Status {
		return &Status{State: state, AppliedDeploymentID: applied, Messages: msgs}
	}
	cases := []struct {
		name   string
		action string
		before *Status
		after  Status
		spec   Spec
		want   string // "Type Reason" or "" for none
	}{
		{"a first deploy", actionApply, nil, *st(StateReady, "s-1:a"), s, "Normal Deployed"},
		{"a new deploymentId", actionApply, st(StateReady, "s-0:a"), *st(StateReady, "s-1:a"), s, "Normal Deployed"},
		{"a re-apply of the same deploymentId, still Ready", actionApply, st(StateReady, "s-1:a"), *st(StateReady, "s-1:a"), s, ""},
		{"a recovery", actionApply, st(StateErrApplied, "s-0:a", refused...), *st(StateReady, "s-1:a"), s, "Normal Deployed"},
		{"drift put back", actionApply, st(StateModified, "s-1:a", "modified ConfigMap web/a"), *st(StateReady, "s-1:a"), s, "Normal Deployed"},
		{"the first refusal", actionApply, st(StateReady, "s-0:a"), *st(StateErrApplied, "s-0:a", refused...), s, "Warning ErrApplied"},
		{"the same refusal again", actionApply, st(StateErrApplied, "s-0:a", refused...), *st(StateErrApplied, "s-0:a", refused...), s, ""},
		{"another refusal", actionApply, st(StateErrApplied, "s-0:a", refused...), *st(StateErrApplied, "s-0:a", "quota exceeded"), s, "Warning ErrApplied"},
		{"a readiness timeout", actionApply, nil, *st(StateNotReady, "s-1:a", "Deployment web/web: not Available after 5s"), s, "Warning NotReady"},
		{"held by a gate", actionApply, nil, *st(StateWaitApplied, "", "waiting for c/apps/db is NotReady"), withGate(s, StateNotReady), ""},
		{"paused", actionApply, st(StateErrApplied, "s-0:a", refused...), *st(StateErrApplied, "s-0:a", "paused: the bundle keeps what it has"), pausedSpec(s), ""},
		{"drift found", actionRefresh, st(StateReady, "s-1:a"), *st(StateModified, "s-1:a", "modified ConfigMap web/a"), s, "Warning Modified"},
		{"the same drift, found again", actionRefresh, st(StateModified, "s-1:a", "modified ConfigMap web/a"), *st(StateModified, "s-1:a", "modified ConfigMap web/a"), s, ""},
		{"a refresh that finds nothing", actionRefresh, st(StateReady, "s-1:a"), *st(StateReady, "s-1:a"), s, ""},
		{"Events off", actionApply, nil, *st(StateReady, "s-1:a"), spec("s-1:a", nil), ""},
	}
	for _, c := range cases {
		got := ""
		if e := eventFor(c.action, c.before, c.after, c.spec); e != nil {
			got = e.Type + " " + e.Reason
			if e.Action != c.action {
				t.Errorf("%s: action %q", c.name, e.Action)
			}
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	e := eventFor(actionApply, st(StateReady, "s-0:a"), *st(StateErrApplied, "s-0:a", refused...), s)
	if want := `Applying bundle web of GitRepo apps deploymentID=s-1:a failed: ` + refused[0]; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
}

func withGate(s Spec, state string) Spec {
	s.WaitFor = []Gate{{Name: "c/apps/db", State: state}}
	return s
}

func pausedSpec(s Spec) Spec {
	s.Paused = true
	return s
}

// The Event as the API server validates a core/v1 Event with an eventTime: in the bundle's namespace,
// about that Namespace, the reporting fields set, the message within the server's limit.
func TestEventObjectIsAValidEventOnTheBundlesNamespace(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	on := EventsSpec{Namespace: "web", GitRepo: "apps", Bundle: "web"}
	long := pairEvent{Type: "Warning", Reason: "ErrApplied", Action: actionApply, Message: strings.Repeat("é", 800)}
	ev := eventObject(on, long, "pulumi-fleet@runner", now)
	if ev.Namespace != "web" || ev.InvolvedObject.Kind != "Namespace" || ev.InvolvedObject.Name != "web" || ev.InvolvedObject.Namespace != "web" {
		t.Fatalf("where: %+v in %s", ev.InvolvedObject, ev.Namespace)
	}
	if ev.ReportingController != "pulumi-fleet" || ev.Source.Component != "pulumi-fleet" || ev.ReportingInstance == "" || ev.Action != actionApply || ev.Count != 1 || ev.EventTime.IsZero() || ev.LastTimestamp.IsZero() {
		t.Fatalf("reporting fields: %+v", ev)
	}
	if len(ev.Message) > maxEventMessage || !strings.HasSuffix(ev.Message, "...") || !strings.HasPrefix(ev.Message, "é") {
		t.Fatalf("message of %d bytes: %q...", len(ev.Message), ev.Message[:10])
	}
	if ev.Labels["fleet.cattle.io/bundle-name"] != "web" || ev.Labels["fleet.cattle.io/repo-name"] != "apps" {
		t.Fatalf("labels %v", ev.Labels)
	}
	same := eventObject(on, long, "other", now.Add(time.Hour))
	// One Event per pair and reason: other words (content's, changing each run) are the same Event.
	words := eventObject(on, pairEvent{Type: "Warning", Reason: "ErrApplied", Message: "other words"}, "pulumi-fleet@runner", now)
	other := eventObject(on, pairEvent{Type: "Warning", Reason: "NotReady", Message: "other words"}, "pulumi-fleet@runner", now)
	if same.Name != ev.Name || words.Name != ev.Name || other.Name == ev.Name || !strings.HasPrefix(ev.Name, "web.") {
		t.Fatalf("names: %s %s %s %s", ev.Name, same.Name, words.Name, other.Name)
	}
	// A deploy is one Event per deploymentID (its words), not content's.
	d1 := eventObject(on, pairEvent{Type: "Normal", Reason: "Deployed", Message: "Deployed bundle web deploymentID=s-1:a"}, "i", now)
	d2 := eventObject(on, pairEvent{Type: "Normal", Reason: "Deployed", Message: "Deployed bundle web deploymentID=s-1:b"}, "i", now)
	if d1.Name == d2.Name {
		t.Fatalf("two deploys share an Event: %s", d1.Name)
	}
}

// Posting: a new Event is created; the same words again raise its count; a refusal (RBAC) is a warning
// in the pair's messages and leaves its state alone.
func TestAnnouncedPostsCountsAndWarns(t *testing.T) {
	s := eventsOn(spec("s-1:a", nil))
	c := fake.NewClientBuilder().Build()
	ready := Status{State: StateReady, AppliedDeploymentID: "s-1:a"}
	for i := 0; i < 2; i++ {
		if got := announced(context.Background(), c, actionApply, nil, ready, s); len(got.Messages) != 0 {
			t.Fatalf("posted, yet: %v", got.Messages)
		}
	}
	var list corev1.EventList
	if err := c.List(context.Background(), &list, client.InNamespace("web")); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Count != 2 || list.Items[0].Reason != "Deployed" {
		t.Fatalf("events: %+v", list.Items)
	}

	forbidden := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", nil)
		},
	}).Build()
	refused := Status{State: StateErrApplied, Messages: []string{"ConfigMap web/a: denied"}}
	got := announced(context.Background(), forbidden, actionApply, nil, refused, s)
	if got.State != StateErrApplied || len(got.Messages) != 2 || got.Messages[0] != "ConfigMap web/a: denied" ||
		!strings.HasPrefix(got.Messages[1], "warning: the Kubernetes Event ErrApplied was not posted in namespace web: ") || !strings.Contains(got.Messages[1], "forbidden") {
		t.Fatalf("warning: %q", got.Messages)
	}
	if refused.Messages[0] != "ConfigMap web/a: denied" || len(refused.Messages) != 1 {
		t.Fatalf("the status given was changed: %v", refused.Messages)
	}
}

// Turning Events on or off changes no pair: nothing to apply.
func TestEventsSettingIsNeverADiff(t *testing.T) {
	s := spec("s-1:a", map[string]DesiredObject{"/ConfigMap/app/a": {Manifest: configMap("a", nil)}})
	if d := diffPair(readyOutputs(s), eventsOn(s)); d.Changes {
		t.Fatalf("on: %+v", d)
	}
	if d := diffPair(readyOutputs(eventsOn(s)), s); d.Changes {
		t.Fatalf("off: %+v", d)
	}
}

// Content's words as an Event's message: one line, no escape sequence or control character, bounded.
func TestEventTextIsOnePlainBoundedLine(t *testing.T) {
	hostile := []string{
		"a\nb\rc\r\nd\u2028e\u2029f\u0085g\vh\fi",
		"\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07link\x1b]8;;\x07 \x1b[2J",
		"nul\x00bel\x07del\x7f c1\u009b",
		"bidi \u202eexe.txt \u2066x\u2069",
		"::error::x\n##[group]y",
		"invalid utf8 \xff\xfe",
		strings.Repeat("é", 2000),
		strings.Repeat("x\n", 5000),
	}
	bad := regexp.MustCompile(`[\x00-\x1f\x7f\x{0080}-\x{009f}\x{2028}\x{2029}\x{202a}-\x{202e}\x{2066}-\x{2069}]`)
	for _, h := range hostile {
		got := eventText(h)
		if bad.MatchString(got) || len(got) > maxEventMessage || !utf8.ValidString(got) {
			t.Errorf("eventText(%q) = %q", h[:min(len(h), 40)], got[:min(len(got), 80)])
		}
	}
	if got := eventText("ConfigMap web/a: denied\nsecond"); got != "ConfigMap web/a: denied second" {
		t.Errorf("the words changed: %q", got)
	}
}
