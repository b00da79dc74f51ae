package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Reaping and naming the processes a command leaves behind.

// reapUntil reaps children (the command and orphans reparented to the
// helper) until pid exits, and returns its status.
func reapUntil(pid int) syscall.WaitStatus {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return ws
		}
		if got == pid {
			return ws
		}
	}
}

// endLeftovers names and kills every process still running under the
// helper after the command ended, and reaps them. In a PID namespace that
// is everything but the helper (PID 1); otherwise the orphans reparented to
// the helper as child subreaper.
func endLeftovers(namespaces, proc bool) []string {
	var names []string
	seen := map[int]bool{}
	for range 50 {
		reapAll()
		var pids []int
		switch {
		case namespaces && !proc:
			// No /proc of our own: we cannot name them, but we know.
			var ws syscall.WaitStatus
			if got, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); got == 0 && err == nil {
				pids = []int{-1}
			}
		default:
			pids = descendants(namespaces)
		}
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if !seen[pid] {
				seen[pid] = true
				names = append(names, describe(pid))
			}
		}
		if namespaces {
			_ = syscall.Kill(-1, syscall.SIGKILL) // as PID 1: everything else in the namespace
		} else {
			for _, pid := range pids {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		runtime.Gosched()
	}
	reapAll()
	slices.Sort(names)
	return names
}

// reapAll reaps every child that has exited.
func reapAll() {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if got <= 0 || err != nil {
			return
		}
	}
}

// descendants lists the processes the helper is responsible for: every
// other process of its PID namespace, or its children (orphans of the
// command reparented to the subreaper).
func descendants(namespaces bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if namespaces || ppid(pid) == self {
			out = append(out, pid)
		}
	}
	return out
}

func ppid(pid int) int {
	f := statFields(pid)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// state is the one-letter process state of /proc/PID/stat, or 0.
func state(pid int) byte {
	f := statFields(pid)
	if len(f) < 1 || f[0] == "" {
		return 0
	}
	return f[0][0]
}

// statFields are the fields of /proc/PID/stat after the command name.
func statFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// describe is "pid N: command line" for a report.
func describe(pid int) string {
	if pid < 0 {
		return "unnamed processes (no private /proc)"
	}
	var cmd string
	var err error
	// A process caught inside execve has its new name but not yet its new
	// argument area: its command line reads empty for a moment. Wait for
	// it briefly (a zombie's stays empty for good).
	for i := 0; ; i++ {
		var b []byte
		b, err = os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		cmd = strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
		if err != nil || cmd != "" || i == 20 || state(pid) == 'Z' {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err != nil || cmd == "" {
		c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		cmd = strings.TrimSpace(string(c))
	}
	if len(cmd) > 200 {
		cmd = cmd[:200] + "…"
	}
	return fmt.Sprintf("pid %d: %s", pid, cmd)
}
