package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/object"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func widget(phase string, extra map[string]any) map[string]any {
	status := map[string]any{}
	if phase != "" {
		status["phase"] = phase
	}
	for k, v := range extra {
		status[k] = v
	}
	return map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns", "generation": int64(2)},
		"status":   status,
	}
}

func mustRules(t *testing.T, list ...HealthCheck) healthRules {
	t.Helper()
	rules, err := compileHealthChecks(list)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

var widgetCheck = HealthCheck{
	APIVersion: "example.com/v1", Kind: "Widget",
	Current:    "status.phase == 'Running'",
	InProgress: "has(status.phase) && status.phase == 'Starting'",
	Failed:     "self.status.?phase.orValue('') == 'Crashed'",
}

func TestHealthVerdicts(t *testing.T) {
	kc := mustRules(t, widgetCheck).of("example.com", "Widget")
	if kc == nil {
		t.Fatal("no check for example.com/Widget")
	}
	cases := []struct {
		name    string
		obj     map[string]any
		want    kstatus.Status
		message string
	}{
		{"current holds", widget("Running", nil), kstatus.CurrentStatus, ""},
		{"nothing holds", widget("Pending", nil), kstatus.InProgressStatus, `current expression "status.phase == 'Running'" is false`},
		{"failed holds", widget("Crashed", nil), kstatus.FailedStatus, `failed expression "self.status.?phase.orValue('') == 'Crashed'" holds`},
		{"inProgress holds", widget("Starting", nil), kstatus.InProgressStatus, `inProgress expression "has(status.phase) && status.phase == 'Starting'" holds`},
		{"a missing field is not ready, with the evaluation's words", widget("", nil), kstatus.InProgressStatus, "no such key"},
		{"observedGeneration behind", widget("Running", map[string]any{"observedGeneration": int64(1)}), kstatus.InProgressStatus, "observedGeneration 1 is behind metadata.generation 2"},
		{"observedGeneration caught up", widget("Running", map[string]any{"observedGeneration": int64(2)}), kstatus.CurrentStatus, ""},
	}
	for _, c := range cases {
		v := kc.judge(context.Background(), c.obj)
		if v.Status != c.want || !strings.Contains(v.Message, c.message) {
			t.Errorf("%s: got %s %q, want %s containing %q", c.name, v.Status, v.Message, c.want, c.message)
		}
	}
}

// inProgress is evaluated before failed, as Flux's RFC 0009 orders them.
func TestHealthOrderInProgressBeforeFailed(t *testing.T) {
	kc := mustRules(t, HealthCheck{APIVersion: "example.com/v1", Kind: "Widget", Current: "true", InProgress: "true", Failed: "true"}).of("example.com", "Widget")
	if v := kc.judge(context.Background(), widget("x", nil)); v.Status != kstatus.InProgressStatus {
		t.Fatalf("got %s, want InProgress", v.Status)
	}
}

func TestHealthCostBound(t *testing.T) {
	kc := mustRules(t, HealthCheck{APIVersion: "example.com/v1", Kind: "Widget",
		Current: "status.items.all(a, status.items.all(b, status.items.all(c, a + b + c >= 0)))"}).of("example.com", "Widget")
	items := make([]any, 400)
	for i := range items {
		items[i] = int64(i)
	}
	v := kc.judge(context.Background(), widget("", map[string]any{"items": items}))
	if v.Status != kstatus.InProgressStatus || !strings.Contains(v.Message, "cost limit") {
		t.Fatalf("got %s %q, want InProgress over the cost limit", v.Status, v.Message)
	}
	small := kc.judge(context.Background(), widget("", map[string]any{"items": items[:5]}))
	if small.Status != kstatus.CurrentStatus {
		t.Fatalf("a small list: got %s %q, want Current", small.Status, small.Message)
	}
}

func TestHealthNotABool(t *testing.T) {
	kc := mustRules(t, HealthCheck{APIVersion: "example.com/v1", Kind: "Widget", Current: "status.phase"}).of("example.com", "Widget")
	if v := kc.judge(context.Background(), widget("Running", nil)); v.Status != kstatus.InProgressStatus || !strings.Contains(v.Message, "not a bool") {
		t.Fatalf("got %s %q", v.Status, v.Message)
	}
}

func TestHealthCompileErrorsNameTheEntry(t *testing.T) {
	_, err := compileHealthChecks([]HealthCheck{
		{APIVersion: "example.com/v1", Kind: "Widget", Current: "status.phase == "},
		{APIVersion: "example.com/v1", Kind: "Gadget", Current: "true", Failed: "status.(("},
		{APIVersion: "example.com/v2", Kind: "Widget", Current: "true"},
		{APIVersion: "example.com/v1", Kind: "Doohickey"},
	})
	var problems healthProblems
	if !errors.As(err, &problems) {
		t.Fatalf("got %v, want the problems", err)
	}
	text := err.Error()
	for _, want := range []string{
		`healthChecks[0].current: example.com/v1 Widget: "status.phase == " does not compile`,
		`healthChecks[1].failed: example.com/v1 Gadget: "status.((" does not compile`,
		`healthChecks[2].kind: example.com/v2 Widget has health checks already`,
		`healthChecks[3].current: is required (example.com/v1 Doohickey)`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in %s", want, text)
		}
	}
}

func TestHealthCheckCLI(t *testing.T) {
	var out strings.Builder
	if err := checkHealthChecksMain(strings.NewReader(`[{"apiVersion":"a/v1","kind":"K","current":"x ==="}]`), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"index":0,"field":"current"`) {
		t.Fatalf("got %s", out.String())
	}
	out.Reset()
	if err := checkHealthChecksMain(strings.NewReader(`[{"apiVersion":"a/v1","kind":"K","current":"true"}]`), &out); err != nil || strings.TrimSpace(out.String()) != "[]" {
		t.Fatalf("got %s, %v", out.String(), err)
	}
}

// The wait waits for the awaited kinds and the checked ones, not for other kinds.
func TestWaitSetHasCheckedKinds(t *testing.T) {
	rules := mustRules(t, widgetCheck)
	id := func(group, kind string) object.ObjMetadata {
		return object.ObjMetadata{GroupKind: schema.GroupKind{Group: group, Kind: kind}, Namespace: "ns", Name: "n"}
	}
	set := waitSet(object.ObjMetadataSet{id("apps", "Deployment"), id("example.com", "Widget"), id("", "ConfigMap"), id("example.com", "Gadget")}, rules)
	if len(set) != 2 || set[0].GroupKind.Kind != "Deployment" || set[1].GroupKind.Kind != "Widget" {
		t.Fatalf("got %v", set)
	}
	if len(waitSet(object.ObjMetadataSet{id("example.com", "Widget")}, nil)) != 0 {
		t.Fatal("without checks a custom resource is not waited for")
	}
}

// A change of the health checks is a change of the pair; a spec without them is as before.
func TestDiffHealthChecks(t *testing.T) {
	spec := Spec{DeploymentID: "d", DeletePolicy: DeletePolicy{Propagation: "background"}}
	olds := &Outputs{Spec: spec, Status: Status{State: StateReady, AppliedDeploymentID: "d"}}
	if d := diffPair(olds, spec); d.Changes {
		t.Fatalf("unchanged: %v", d.Detailed)
	}
	news := spec
	news.HealthChecks = []HealthCheck{widgetCheck}
	if d := diffPair(olds, news); !d.Changes || d.Detailed["healthChecks"] != pulumirpc.PropertyDiff_UPDATE {
		t.Fatalf("added checks: %v", d.Detailed)
	}
}
