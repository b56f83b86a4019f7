package main

// The bounds of the sandbox's jobs. A template cannot be interrupted, so a job that runs past its time
// (or its GitRepo's) is abandoned: it gets an error at once, its worker takes the next job, and its
// goroutine dies with the process when the batch is answered. Nothing else of the batch is stopped or
// run again, so N looping jobs cost their GitRepo its time once, never N job limits one after the
// other. Only the memory limit ends the process (a memory bomb cannot be left running); the caller
// then reads the markers on stderr (core/renderer/sandbox.ts):
//   fleet-render-job start|done KEY      a job began, or finished with its result
//   fleet-render-job stopped KEY time|group   a job was abandoned (its error is in the result)
//   fleet-render-group-used G MS         group G's time spent here, written when the process ends early
//   fleet-render-limit memory N MiB      why the process ended

import (
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// watchedJob is a running job; stop is closed when it is abandoned, after reason is set.
type watchedJob struct {
	key    string
	group  int // -1: no group
	start  time.Time
	stop   chan struct{}
	reason string
}

// jobWatch marks each job's start and end on stderr and enforces the limits; nil outside the sandbox.
type jobWatch struct {
	limits sandboxLimits
	mu     sync.Mutex
	active map[string]*watchedJob
	// written: the size of the results accepted so far, against totalOutput.
	written int64
	// groupOf: each job's group (its GitRepo); groupLeft: the time each group has left, spent while any
	// of its jobs runs; groupUsed: spent here; groupOver: out of time (its jobs fail without starting).
	groupOf   map[string]int
	groupLeft []time.Duration
	groupUsed []time.Duration
	groupOver []bool
}

func newJobWatch(l sandboxLimits) *jobWatch {
	w := &jobWatch{limits: l, active: map[string]*watchedJob{}}
	debug.SetMemoryLimit(l.memory)
	go w.watch()
	return w
}

// setGroups sets the jobs' groups and the time each group has left (nil outside the sandbox: no limit).
func (w *jobWatch) setGroups(groupOf map[string]int, seconds []float64) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.groupOf = groupOf
	w.groupLeft = make([]time.Duration, len(seconds))
	w.groupUsed = make([]time.Duration, len(seconds))
	w.groupOver = make([]bool, len(seconds))
	for i, s := range seconds {
		w.groupLeft[i] = time.Duration(s * float64(time.Second))
	}
}

// usedMs: the time each group spent (nil outside the sandbox).
func (w *jobWatch) usedMs() []int64 {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	used := make([]int64, len(w.groupUsed))
	for g, d := range w.groupUsed {
		used[g] = d.Milliseconds()
	}
	return used
}

func (w *jobWatch) timeReason() string {
	return fmt.Sprintf("rendering took longer than the limit of %g s per job (PULUMI_FLEET_RENDER_TIMEOUT_SECONDS): stopped", w.limits.jobTimeout.Seconds())
}

func (w *jobWatch) groupReason() string {
	return fmt.Sprintf("rendering this GitRepo's jobs took longer than the limit of %g s per GitRepo (PULUMI_FLEET_GITREPO_RENDER_SECONDS): stopped before this one finished", w.limits.gitRepoSeconds)
}

// runJob runs one job between its markers: its result, or limited(reason) when the job or its group ran
// out of time (then the job's goroutine is left behind, see above). Outside the sandbox (w == nil) it
// just runs it.
func runJob[T any](w *jobWatch, kind, id string, f func() T, limited func(reason string) T) T {
	if w == nil {
		return f()
	}
	j := w.begin(kind + " " + id)
	if j == nil {
		return limited(w.groupReason())
	}
	result := make(chan T, 1) // an abandoned job's late result is dropped, never blocks
	go func() { result <- f() }()
	select {
	case r := <-result:
		if reason, ok := w.end(j); !ok {
			return limited(reason)
		}
		return r
	case <-j.stop:
		return limited(j.reason)
	}
}

// begin registers a job as running; nil if its group is already out of time.
func (w *jobWatch) begin(key string) *watchedJob {
	w.mu.Lock()
	defer w.mu.Unlock()
	g, ok := w.groupOf[key]
	if !ok || g < 0 || g >= len(w.groupOver) {
		g = -1
	}
	if g >= 0 && w.groupOver[g] {
		fmt.Fprintf(os.Stderr, "fleet-render-job stopped %s group\n", key)
		return nil
	}
	j := &watchedJob{key: key, group: g, start: time.Now(), stop: make(chan struct{})}
	w.active[key] = j
	fmt.Fprintf(os.Stderr, "fleet-render-job start %s\n", key)
	return j
}

// end marks a job finished; false (and why) if it had been abandoned meanwhile.
func (w *jobWatch) end(j *watchedJob) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if j.reason != "" {
		return j.reason, false
	}
	delete(w.active, j.key)
	fmt.Fprintf(os.Stderr, "fleet-render-job done %s\n", j.key)
	return "", true
}

// abandon gives up on a running job. Called with mu held.
func (w *jobWatch) abandon(j *watchedJob, limit, reason string) {
	delete(w.active, j.key)
	j.reason = reason
	close(j.stop)
	fmt.Fprintf(os.Stderr, "fleet-render-job stopped %s %s\n", j.key, limit)
}

// check says whether a result is over the output limit of one job, would take the batch's results
// over theirs, or nests too deeply (nil outside the sandbox: no limit). A result that fits is counted.
func (w *jobWatch) check(result []byte) error {
	if w == nil {
		return nil
	}
	size := len(result)
	if err := checkJSONDepth(result); err != nil {
		return err
	}
	if int64(size) > w.limits.output {
		return fmt.Errorf("the result is %d MiB, over the limit of %d MiB per job (PULUMI_FLEET_RENDER_OUTPUT_MIB)", size>>20, w.limits.output>>20)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written+int64(size) > w.limits.totalOutput {
		return fmt.Errorf("the results of this batch add up to more than %d MiB (PULUMI_FLEET_RENDER_TOTAL_OUTPUT_MIB)", w.limits.totalOutput>>20)
	}
	w.written += int64(size)
	return nil
}

// tick charges each group with a running job for dt, abandons the jobs of a group out of time and the
// jobs past their own time. Called with mu held.
func (w *jobWatch) tick(now time.Time, dt time.Duration) {
	charged := map[int]bool{}
	for _, j := range w.active {
		if j.group >= 0 && !charged[j.group] {
			charged[j.group] = true
			w.groupUsed[j.group] += dt
		}
	}
	for g := range charged {
		if w.groupUsed[g] > w.groupLeft[g] {
			w.groupOver[g] = true
		}
	}
	for _, j := range w.active {
		switch {
		case j.group >= 0 && w.groupOver[j.group]:
			w.abandon(j, "group", w.groupReason())
		case now.Sub(j.start) > w.limits.jobTimeout:
			w.abandon(j, "time", w.timeReason())
		}
	}
}

// watch enforces the limits every few milliseconds; past the memory limit it ends the process, writing
// each group's time spent (the caller carries it into the next run) and which limit it was.
func (w *jobWatch) watch() {
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	last := time.Now()
	for range time.Tick(5 * time.Millisecond) {
		metrics.Read(sample)
		used := int64(sample[0].Value.Uint64() - sample[1].Value.Uint64())
		w.mu.Lock()
		now := time.Now()
		w.tick(now, now.Sub(last))
		last = now
		if used > w.limits.memory {
			for g, spent := range w.groupUsed {
				if spent > 0 {
					fmt.Fprintf(os.Stderr, "fleet-render-group-used %d %d\n", g, spent.Milliseconds())
				}
			}
			fmt.Fprintf(os.Stderr, "fleet-render-limit memory %d MiB\n", w.limits.memory>>20)
			os.Exit(3)
		}
		w.mu.Unlock()
	}
}
