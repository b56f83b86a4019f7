package main

// The bounds of a decryption. The files come from a GitRepo (untrusted content): a file that only
// looks SOPS-encrypted reaches SOPS's stores, which expand YAML aliases without limit. So `decrypt`
// runs as the renderer's sandbox does (tools/fleet-render/sandbox.go), with the same flags and the
// operator's same limits (core/renderer/sandbox.ts SandboxLimits):
//   - before the request is read: no environment, a seccomp filter under which every path, socket,
//     program and other process is refused (decryption needs none: the key arrives in the request),
//     an address-space rlimit;
//   - a watchdog that ends the process when it passes its memory or a file its time, naming the
//     file on stderr (the caller fails that file's bundle and decrypts the others again);
//   - each file's result and all results bounded in size.
// Files are decrypted one after another; stderr carries `fleet-sops-file <name>` before each one and
// `fleet-sops-file-done` after it.

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

type limits struct {
	fileTimeout time.Duration
	memory      int64
	output      int64
	totalOutput int64
}

// parseLimits reads the renderer's sandbox flags (core/renderer/sandbox.ts sandboxArgs): one home for
// the limits. --job-timeout is one file's time here.
func parseLimits(args []string) (limits, error) {
	fs := flag.NewFlagSet("fleet-sops decrypt", flag.ContinueOnError)
	fs.Bool("sandbox", true, "always on for decrypt")
	// The GitRepo's time is bounded by the caller (core/bundles/fleet-sops.ts), which ends the process; accepted so both tools take one set of flags.
	fs.Float64("gitrepo-seconds", 0, "the time limit of one GitRepo's runs, seconds (enforced by the caller)")
	timeout := fs.Duration("job-timeout", 2*time.Minute, "time limit of one file")
	memory := fs.Int64("memory-mib", 2048, "memory limit of the process, MiB")
	output := fs.Int64("output-mib", 64, "size limit of one file's result, MiB")
	total := fs.Int64("total-output-mib", 256, "size limit of all results, MiB")
	if err := fs.Parse(args); err != nil {
		return limits{}, err
	}
	if *timeout <= 0 || *memory <= 0 || *output <= 0 || *total <= 0 {
		return limits{}, errors.New("limits must be positive")
	}
	return limits{fileTimeout: *timeout, memory: *memory << 20, output: *output << 20, totalOutput: *total << 20}, nil
}

// deniedSyscalls: what decryption never needs (the request arrives on stdin): every path (open, stat,
// links, directories), every socket, programs, other processes, mounts and namespaces.
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

func enterSandbox(l limits) error {
	os.Clearenv()
	// The address space is a backstop behind the watchdog (which names the file): Go reserves address
	// space beyond what it uses, hence the headroom.
	for _, r := range []struct {
		resource int
		value    uint64
	}{{unix.RLIMIT_AS, uint64(2*l.memory + 1<<30)}, {unix.RLIMIT_CORE, 0}} {
		if err := unix.Setrlimit(r.resource, &unix.Rlimit{Cur: r.value, Max: r.value}); err != nil {
			return fmt.Errorf("setrlimit %d: %w", r.resource, err)
		}
	}
	if !seccomp.Supported() {
		return errors.New("this kernel has no seccomp filter support (CONFIG_SECCOMP_FILTER); GitRepo files are not decrypted unconfined")
	}
	return seccomp.LoadFilter(seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls:      []seccomp.SyscallGroup{{Action: seccomp.ActionErrno, Names: deniedSyscalls}},
		},
	})
}

// watch is the decryption's watchdog: the file in work and since when.
type watch struct {
	limits  limits
	mu      sync.Mutex
	current string
	since   time.Time
	written int64
}

func newWatch(l limits) *watch {
	w := &watch{limits: l}
	debug.SetMemoryLimit(l.memory)
	go w.run()
	return w
}

// start marks the file decrypted from now on (stderr tells the caller, should the process end).
func (w *watch) start(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.current, w.since = name, time.Now()
	fmt.Fprintf(os.Stderr, "fleet-sops-file %s\n", quoted(name))
}

func (w *watch) done() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.current = ""
	fmt.Fprintln(os.Stderr, "fleet-sops-file-done")
}

// accept says whether one file's result fits its limit and what is left of all results'; it counts it.
func (w *watch) accept(r fileResult) error {
	data, _ := json.Marshal(r)
	size := int64(len(data))
	if size > w.limits.output {
		return fmt.Errorf("decrypts to %d MiB, over the limit of %d MiB per file (PULUMI_FLEET_RENDER_OUTPUT_MIB)", size>>20, w.limits.output>>20)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written+size > w.limits.totalOutput {
		return fmt.Errorf("was not decrypted: the GitRepo's decrypted files add up to more than %d MiB (PULUMI_FLEET_RENDER_TOTAL_OUTPUT_MIB)", w.limits.totalOutput>>20)
	}
	w.written += size
	return nil
}

// run ends the process when it passes its memory or a file its time: SOPS's decoding cannot be
// interrupted, the process can. The line on stderr names the limit and the file.
func (w *watch) run() {
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	for range time.Tick(5 * time.Millisecond) {
		metrics.Read(sample)
		used := int64(sample[0].Value.Uint64() - sample[1].Value.Uint64())
		w.mu.Lock()
		if used > w.limits.memory {
			fmt.Fprintf(os.Stderr, "fleet-sops-limit memory %s\n", quoted(w.current))
			os.Exit(3)
		}
		if w.current != "" && time.Since(w.since) > w.limits.fileTimeout {
			fmt.Fprintf(os.Stderr, "fleet-sops-limit time %s\n", quoted(w.current))
			os.Exit(3)
		}
		w.mu.Unlock()
	}
}

// quoted: a file name as one JSON string, so a name with line breaks stays on its line.
func quoted(name string) string {
	data, _ := json.Marshal(name)
	return string(data)
}
