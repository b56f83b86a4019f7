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
// Jobs are bounded (jobwatch.go): each one's time and its GitRepo's time, the process's memory (checked
// every few milliseconds, with RLIMIT_AS behind it) and each result's size. A job past a time limit gets
// an error and the batch goes on; only the memory limit ends the process, and the trusted caller reads
// the job markers written on stderr to learn which jobs were running (core/renderer/sandbox.ts).

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

type sandboxLimits struct {
	jobTimeout time.Duration
	// gitRepoSeconds: the operator's limit per GitRepo, for messages (the time each group has left
	// arrives with the request: groupSeconds).
	gitRepoSeconds float64
	memory         int64
	output         int64
	// totalOutput bounds the whole response: the caller reads it as one string (V8 strings end near 512 MiB).
	totalOutput int64
}

func parseSandboxFlags(args []string) (sandboxLimits, error) {
	fs := flag.NewFlagSet("fleet-render --sandbox", flag.ContinueOnError)
	timeout := fs.Duration("job-timeout", 2*time.Minute, "time limit of one job")
	gitRepo := fs.Float64("gitrepo-seconds", 0, "the time limit of one GitRepo's jobs, seconds, as the operator set it (for messages)")
	memory := fs.Int64("memory-mib", 2048, "memory limit of the process, MiB")
	output := fs.Int64("output-mib", 64, "size limit of one job's result, MiB")
	total := fs.Int64("total-output-mib", 256, "size limit of all results of the batch, MiB")
	if err := fs.Parse(args); err != nil {
		return sandboxLimits{}, err
	}
	if *timeout <= 0 || *memory <= 0 || *output <= 0 || *total <= 0 {
		return sandboxLimits{}, errors.New("limits must be positive")
	}
	return sandboxLimits{jobTimeout: *timeout, gitRepoSeconds: *gitRepo, memory: *memory << 20, output: *output << 20, totalOutput: *total << 20}, nil
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
