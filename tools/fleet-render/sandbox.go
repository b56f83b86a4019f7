package main

// The sandbox for GitRepo content (`fleet-render --sandbox`). Whoever can push to a GitRepo writes the
// templates, values and kustomizations this process evaluates, so in this mode it can only compute:
// the request arrives whole on stdin and the answer leaves on stdout, and before reading either the
// process
//   - drops its environment (nothing of the runner's: credentials, kubeconfig paths, tokens);
//   - installs a seccomp filter (all threads, no_new_privs) under which opening or probing any path,
//     creating a socket, connecting, running a program, tracing or signalling another process fail
//     with EPERM, whatever library asks (kustomize's remote loader and git cloner, Helm's schema
//     $ref loader, template functions);
//   - caps its address space (rlimit).
// Jobs are bounded: each one's time, the process's memory (checked every few milliseconds, with
// RLIMIT_AS behind it) and each result's size. The trusted caller reads the job markers written on
// stderr to learn which job hit a limit, and reruns the others (core/render/fleet-render.ts).

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

type sandboxLimits struct {
	jobTimeout time.Duration
	memory     int64
	output     int64
	// totalOutput bounds the whole response: the caller reads it as one string (V8 strings end near 512 MiB).
	totalOutput int64
}

func parseSandboxFlags(args []string) (sandboxLimits, error) {
	fs := flag.NewFlagSet("fleet-render --sandbox", flag.ContinueOnError)
	timeout := fs.Duration("job-timeout", 2*time.Minute, "time limit of one job")
	memory := fs.Int64("memory-mib", 2048, "memory limit of the process, MiB")
	output := fs.Int64("output-mib", 64, "size limit of one job's result, MiB")
	total := fs.Int64("total-output-mib", 256, "size limit of all results of the batch, MiB")
	if err := fs.Parse(args); err != nil {
		return sandboxLimits{}, err
	}
	if *timeout <= 0 || *memory <= 0 || *output <= 0 || *total <= 0 {
		return sandboxLimits{}, errors.New("limits must be positive")
	}
	return sandboxLimits{jobTimeout: *timeout, memory: *memory << 20, output: *output << 20, totalOutput: *total << 20}, nil
}

// The system calls GitRepo content never needs: every path (open, stat, access, links, directories),
// every socket, programs, other processes, mounts and namespaces.
var deniedSyscalls = []string{
	"open", "openat", "openat2", "creat", "open_by_handle_at", "name_to_handle_at",
	"stat", "lstat", "newfstatat", "statx", "statfs", "access", "faccessat", "faccessat2",
	"readlink", "readlinkat", "chdir", "chroot", "getcwd",
	"mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2",
	"link", "linkat", "symlink", "symlinkat", "mknod", "mknodat", "truncate",
	"chmod", "fchmodat", "chown", "lchown", "fchownat", "utimensat", "utimes", "utime",
	"inotify_add_watch", "fanotify_init", "fanotify_mark",
	"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
	"execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev", "kill", "tkill", "pidfd_open", "pidfd_send_signal",
	"mount", "umount2", "pivot_root", "unshare", "setns", "swapon", "swapoff", "reboot",
	"init_module", "finit_module", "delete_module", "kexec_load", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
}

func enterSandbox(l sandboxLimits) error {
	os.Clearenv()
	// The address space is a backstop behind the memory watchdog (which gives the clear error): Go
	// reserves address space beyond what it uses, hence the headroom.
	limits := []struct {
		resource int
		value    uint64
	}{
		{unix.RLIMIT_AS, uint64(2*l.memory + 1<<30)},
		{unix.RLIMIT_CORE, 0},
	}
	for _, r := range limits {
		if err := unix.Setrlimit(r.resource, &unix.Rlimit{Cur: r.value, Max: r.value}); err != nil {
			return fmt.Errorf("setrlimit %d: %w", r.resource, err)
		}
	}
	if !seccomp.Supported() {
		return errors.New("this kernel has no seccomp filter support (CONFIG_SECCOMP_FILTER); the renderer will not run GitRepo content unconfined")
	}
	// Kustomize fetches `http(s)://` resources with Go's default transport: refuse with a clear error
	// before the filter would (EPERM on socket).
	http.DefaultTransport = refusedTransport{}
	filter := seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls:      []seccomp.SyscallGroup{{Action: seccomp.ActionErrno, Names: deniedSyscalls}},
		},
	}
	if err := seccomp.LoadFilter(filter); err != nil {
		return fmt.Errorf("installing the seccomp filter: %w", err)
	}
	return nil
}

type refusedTransport struct{}

func (refusedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("%s is not fetched: GitRepo content may not make the runner reach the network (vendor it into the repository)", r.URL.Redacted())
}

// jobWatch marks each job's start and end on stderr and enforces the limits; nil outside the sandbox.
type jobWatch struct {
	limits sandboxLimits
	mu     sync.Mutex
	active map[string]time.Time
	// written: the size of the results accepted so far, against totalOutput.
	written int64
	// groupOf: each job's group (its GitRepo); groupLeft: the time each group has left, spent while any
	// of its jobs runs; groupUsed: spent here. N looping jobs of one GitRepo cost its time once, not N
	// job limits one after the other.
	groupOf   map[string]int
	groupLeft []time.Duration
	groupUsed []time.Duration
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
	for i, s := range seconds {
		w.groupLeft[i] = time.Duration(s * float64(time.Second))
	}
}

// spendGroups charges each group with a running job for dt; the first group over its time, or -1.
// Called with mu held.
func (w *jobWatch) spendGroups(dt time.Duration) int {
	charged := map[int]bool{}
	for key := range w.active {
		if g, ok := w.groupOf[key]; ok && g >= 0 && g < len(w.groupUsed) && !charged[g] {
			charged[g] = true
			w.groupUsed[g] += dt
		}
	}
	for g := range charged {
		if w.groupUsed[g] > w.groupLeft[g] {
			return g
		}
	}
	return -1
}

// exit reports each group's time spent (the caller charges it across runs) and ends the process.
// Called with mu held.
func (w *jobWatch) exit() {
	for g, used := range w.groupUsed {
		if used > 0 {
			fmt.Fprintf(os.Stderr, "fleet-render-group-used %d %d\n", g, used.Milliseconds())
		}
	}
	os.Exit(3)
}

func newJobWatch(l sandboxLimits) *jobWatch {
	w := &jobWatch{limits: l, active: map[string]time.Time{}}
	debug.SetMemoryLimit(l.memory)
	go w.watch()
	return w
}

// run runs one job between its markers. Outside the sandbox (w == nil) it just runs it.
func (w *jobWatch) run(kind, id string, f func()) {
	if w == nil {
		f()
		return
	}
	key := kind + " " + id
	w.mu.Lock()
	w.active[key] = time.Now()
	fmt.Fprintf(os.Stderr, "fleet-render-job start %s\n", key)
	w.mu.Unlock()
	f()
	w.mu.Lock()
	delete(w.active, key)
	fmt.Fprintf(os.Stderr, "fleet-render-job done %s\n", key)
	w.mu.Unlock()
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

// watch ends the process when a job runs past its time or the process past its memory: a template
// cannot be interrupted, but the process can. The caller learns which limit and job from stderr.
func (w *jobWatch) watch() {
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	last := time.Now()
	for range time.Tick(5 * time.Millisecond) {
		metrics.Read(sample)
		used := int64(sample[0].Value.Uint64() - sample[1].Value.Uint64())
		w.mu.Lock()
		now := time.Now()
		over := w.spendGroups(now.Sub(last))
		last = now
		if used > w.limits.memory {
			fmt.Fprintf(os.Stderr, "fleet-render-limit memory %d MiB\n", w.limits.memory>>20)
			w.exit()
		}
		if over >= 0 {
			fmt.Fprintf(os.Stderr, "fleet-render-limit group %d\n", over)
			w.exit()
		}
		for key, start := range w.active {
			if time.Since(start) > w.limits.jobTimeout {
				fmt.Fprintf(os.Stderr, "fleet-render-limit time %s\n", key)
				w.exit()
			}
		}
		w.mu.Unlock()
	}
}
