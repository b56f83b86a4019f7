package main

import (
	"strings"
	"testing"
	"time"
)

// spin stands for a template that never ends: it can only be abandoned.
func spin(stop <-chan struct{}) string {
	for {
		select {
		case <-stop:
			return "finished late"
		default:
		}
	}
}

func TestJobPastItsTimeIsAbandonedAndTheBatchGoesOn(t *testing.T) {
	w := newJobWatch(sandboxLimits{jobTimeout: 100 * time.Millisecond, gitRepoSeconds: 60, memory: 1 << 40, output: 1 << 20, totalOutput: 1 << 20})
	stop := make(chan struct{})
	defer close(stop)
	start := time.Now()
	got := runJob(w, "renders", "0", func() string { return spin(stop) }, func(reason string) string { return reason })
	if !strings.Contains(got, "per job (PULUMI_FLEET_RENDER_TIMEOUT_SECONDS)") {
		t.Fatalf("looping job: %q", got)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("abandoned after %v", took)
	}
	if got := runJob(w, "renders", "1", func() string { return "ok" }, func(reason string) string { return reason }); got != "ok" {
		t.Fatalf("the next job: %q", got)
	}
}

func TestGroupOutOfTimeStopsItsRunningJobsAndStartsNoMore(t *testing.T) {
	w := newJobWatch(sandboxLimits{jobTimeout: time.Hour, gitRepoSeconds: 0.2, memory: 1 << 40, output: 1 << 20, totalOutput: 1 << 20})
	w.setGroups(map[string]int{"renders 0": 0, "renders 1": 0, "renders 2": 1}, []float64{0.2, 60})
	stop := make(chan struct{})
	defer close(stop)
	reason := func(r string) string { return r }
	done := make(chan string, 2)
	for _, id := range []string{"0", "1"} {
		go func() { done <- runJob(w, "renders", id, func() string { return spin(stop) }, reason) }()
	}
	for range 2 {
		if got := <-done; !strings.Contains(got, "0.2 s per GitRepo (PULUMI_FLEET_GITREPO_RENDER_SECONDS)") {
			t.Fatalf("looping job of the group: %q", got)
		}
	}
	if got := runJob(w, "renders", "0", func() string { return "ran" }, reason); got == "ran" {
		t.Fatal("a job of a group out of time started")
	}
	if got := runJob(w, "renders", "2", func() string { return "ok" }, reason); got != "ok" {
		t.Fatalf("another group's job: %q", got)
	}
	if used := w.usedMs(); used[0] < 200 || used[0] > 2000 || used[1] > 1000 {
		t.Fatalf("time used per group: %v", used)
	}
}
