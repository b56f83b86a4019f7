// proc-guard runs one program so that no process it starts outlives it, nor outlives the process
// that started the guard (an operation of pulumi-fleet), even when that process's whole process
// group is killed with SIGKILL. Linux only; needs no privilege.
//
// Usage:
//
//	proc-guard [--grace SECONDS] -- PROGRAM [ARG...]
//	NAME [ARG...]
//
// The second form is a hard link (or copy) of proc-guard under another name: it runs the program
// whose path is the first line of the file <its own path>.target, with the same arguments. That is
// how bin/pulumi of the guarded CLI root works (automation/process-guard.ts): the Automation API and
// `npm run pulumi` run it as if it were the CLI.
//
// What it does, in this order:
//   - asks the kernel for a signal when its parent dies (PR_SET_PDEATHSIG; its parent is also checked
//     every half second, in case the thread that started it ended before the process);
//   - becomes a child subreaper (PR_SET_CHILD_SUBREAPER): every process PROGRAM starts, however it
//     detaches (the CLI's plugins run in process groups of their own), is reparented to the guard
//     when its own parent dies, so the guard can always find and end it;
//   - moves itself into a process group of its own (in the same session), so that a kill of its
//     caller's process group does not reach it, and starts PROGRAM back in the caller's group: a
//     Ctrl-C at the terminal or a kill of that group reaches PROGRAM exactly as if the caller had
//     started it directly; signals sent to the guard itself (INT, TERM, HUP, QUIT, USR1, USR2) are
//     passed on to PROGRAM;
//   - when PROGRAM ends: SIGKILLs and reaps whatever it started that is still running (normally
//     nothing: the CLI ends its plugins itself), then exits as PROGRAM did (same exit code, or death
//     by the same signal); stdin, stdout and stderr are PROGRAM's own, the guard writes nothing;
//   - when its parent dies first: SIGTERM to PROGRAM (what Node's execa does to the children of a
//     Node process that exits), then, as soon as PROGRAM ends or after the grace period (default
//     10 s), SIGKILL to every process left under the guard, and exit.
//
// Started as the leader of its process group (not how the operations start it), the guard cannot
// leave that group: PROGRAM then shares it, and signals to the group reach PROGRAM directly, so the
// guard passes none on; cleaning up after PROGRAM and after the parent's death work the same.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// deathSignal is what the kernel sends when the parent dies: a real-time signal nobody else sends.
const deathSignal = syscall.Signal(42)

// forwarded are passed on to PROGRAM when sent to the guard.
var forwarded = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// parent is read as early as possible: if it already changed when the death signal is armed, the
// parent died in between.
var parent = os.Getppid()

func init() {
	// The main goroutine stays on the main thread, which holds the parent-death setting.
	runtime.LockOSThread()
}

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "proc-guard: "+format+"\n", args...)
	os.Exit(code)
}

// command returns PROGRAM's path, its argv and the grace period.
func command() (string, []string, time.Duration) {
	grace := 10 * time.Second
	if filepath.Base(os.Args[0]) != "proc-guard" {
		exe, err := os.Executable()
		if err != nil {
			fail(127, "cannot find its own path: %v", err)
		}
		text, err := os.ReadFile(exe + ".target")
		if err != nil {
			fail(127, "started as %s without %s.target: %v", filepath.Base(os.Args[0]), exe, err)
		}
		target := strings.TrimSpace(strings.SplitN(string(text), "\n", 2)[0])
		return target, append([]string{target}, os.Args[1:]...), grace
	}
	args := os.Args[1:]
	for len(args) > 0 && args[0] != "--" {
		switch {
		case args[0] == "--grace" && len(args) > 1:
			s, err := strconv.ParseFloat(args[1], 64)
			if err != nil || s < 0 {
				fail(2, "--grace wants seconds, got %q", args[1])
			}
			grace = time.Duration(s * float64(time.Second))
			args = args[2:]
		default:
			fail(2, "usage: proc-guard [--grace SECONDS] -- PROGRAM [ARG...]")
		}
	}
	if len(args) < 2 {
		fail(2, "usage: proc-guard [--grace SECONDS] -- PROGRAM [ARG...]")
	}
	path, err := exec.LookPath(args[1])
	if err != nil {
		fail(127, "%v", err)
	}
	return path, args[1:], grace
}

// stdio returns fds 0-2 for the child, closed ones as closed.
func stdio() []uintptr {
	files := make([]uintptr, 3)
	for fd := range files {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			files[fd] = ^uintptr(0)
		} else {
			files[fd] = uintptr(fd)
		}
	}
	return files
}

// descendants lists every live process below pid, read from /proc.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
		rest := string(stat)
		if i := strings.LastIndexByte(rest, ')'); i >= 0 {
			rest = rest[i+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) < 2 || fields[0] == "Z" {
			continue
		}
		if pp, err := strconv.Atoi(fields[1]); err == nil {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, children[p]...)
		queue = append(queue, children[p]...)
	}
	return out
}

// reaped is a child's end: its pid and wait status.
type reaped struct {
	pid    int
	status unix.WaitStatus
}

// reapAll reaps every child that has ended, without blocking. more is false once the guard has no
// child at all (and so, as a subreaper, no descendant).
func reapAll() (ended []reaped, more bool) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil: // ECHILD
			return ended, false
		case pid == 0:
			return ended, true
		}
		ended = append(ended, reaped{pid, ws})
	}
}

// killAll SIGKILLs every process under the guard until none is left, reaping them. The scan is
// repeated after every reaped child: a process forked just before its parent was killed is reparented
// to the guard and found by the next scan.
func killAll(self int, onReaped func(reaped)) {
	for {
		ended, more := reapAll()
		for _, r := range ended {
			onReaped(r)
		}
		if !more {
			return
		}
		for _, p := range descendants(self) {
			_ = unix.Kill(p, unix.SIGKILL)
		}
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.ECHILD {
			return
		}
		if err == nil {
			onReaped(reaped{pid, ws})
		}
	}
}

// exitAs ends the guard the way PROGRAM ended: its exit code, or death by its signal.
func exitAs(ws unix.WaitStatus) {
	if !ws.Signaled() {
		os.Exit(ws.ExitStatus())
	}
	sig := ws.Signal()
	signal.Reset(sig)
	// The signal's default action, set directly: Go's own handler would turn some signals into an
	// exit code or ignore them. An all-zero sigaction is SIG_DFL with no flags on every architecture.
	var action [4]uint64
	_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&action)), 0, 8, 0, 0)
	var set unix.Sigset_t
	set.Val[(sig-1)/64] |= 1 << ((uint(sig) - 1) % 64)
	_ = unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil)
	_ = unix.Tgkill(os.Getpid(), unix.Gettid(), sig)
	time.Sleep(time.Second)
	os.Exit(128 + int(sig))
}

func main() {
	path, argv, grace := command()
	self := os.Getpid()

	signals := make(chan os.Signal, 32)
	watched := []os.Signal{syscall.SIGCHLD, deathSignal}
	for _, s := range forwarded {
		watched = append(watched, s)
	}
	signal.Notify(signals, watched...)

	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(deathSignal), 0, 0, 0); err != nil {
		fail(126, "PR_SET_PDEATHSIG: %v", err)
	}
	if os.Getppid() != parent {
		os.Exit(126) // the parent is already gone: nothing to run for
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fail(126, "PR_SET_CHILD_SUBREAPER: %v", err)
	}
	group := unix.Getpgrp()
	leader := group == self
	if !leader {
		if err := unix.Setpgid(0, 0); err != nil {
			fail(126, "setpgid: %v", err)
		}
	}

	attr := &syscall.ProcAttr{Env: os.Environ(), Files: stdio(), Sys: &syscall.SysProcAttr{Setpgid: true, Pgid: group}}
	child, err := syscall.ForkExec(path, argv, attr)
	if err != nil && !leader {
		if os.Getppid() != parent {
			os.Exit(126)
		}
		// The caller's group is gone while the caller lives (it moved): the program gets one of its own.
		attr.Sys.Pgid = 0
		child, err = syscall.ForkExec(path, argv, attr)
	}
	if err != nil {
		fail(127, "cannot run %s: %v", path, err)
	}

	var status unix.WaitStatus
	done := false
	onReaped := func(r reaped) {
		if r.pid == child {
			status, done = r.status, true
		}
	}
	orphaned := false
	var deadline <-chan time.Time
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()

	for {
		ended, _ := reapAll()
		for _, r := range ended {
			onReaped(r)
		}
		if done {
			killAll(self, onReaped)
			if orphaned {
				os.Exit(128 + int(syscall.SIGTERM))
			}
			exitAs(status)
		}
		var got os.Signal
		select {
		case got = <-signals:
		case <-tick.C:
		case <-deadline:
			killAll(self, onReaped)
			os.Exit(128 + int(syscall.SIGKILL))
		}
		if !orphaned && os.Getppid() != parent {
			orphaned = true
			_ = unix.Kill(child, unix.SIGTERM)
			deadline = time.After(grace)
			continue
		}
		if s, ok := got.(syscall.Signal); ok && !orphaned && !leader && s != syscall.SIGCHLD && s != deathSignal {
			_ = unix.Kill(child, s)
		}
	}
}
