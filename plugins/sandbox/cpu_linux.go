package sandbox

import (
	"bytes"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cpuPoll is how often the helper measures the CPU time of a call.
const cpuPoll = 100 * time.Millisecond

// clockTicks is USER_HZ, the unit of the times in /proc/PID/stat (100 on
// every Linux architecture Go supports).
const clockTicks = 100

// cpuMeter measures the CPU time the command and everything it started
// have used, alive or ended: the usage of a cgroup of their own where
// the helper could make one, else the processes under the helper in /proc
// plus the helper's reaped children.
type cpuMeter struct {
	// usage is an opened cpuacct.usage (v1, ns) or cpu.stat (v2,
	// usage_usec) of the call's cgroup, read from offset 0 each time.
	usage *os.File
	v2    bool
	// cgroup is the cgroup directory (removed at the end) and procs its
	// cgroup.procs, opened for joining (fd of the stage).
	cgroup string
	procs  *os.File
	// how says which of the two measures, for the report.
	how string
}

// newCPUMeter prepares the accounting of one call: the pids cgroup when it
// is a cgroup v2 one (cpu.stat is always there), else a cpuacct cgroup
// (v1) of its own, else /proc. It runs before Landlock applies.
func newCPUMeter(pidsCgroup string) *cpuMeter {
	if pidsCgroup != "" {
		if f, err := os.Open(filepath.Join(pidsCgroup, "cpu.stat")); err == nil {
			return &cpuMeter{usage: f, v2: true, how: "cgroup"}
		}
	}
	if dir, err := newCgroup("cpuacct", false, nil); err == nil {
		f, err1 := os.Open(filepath.Join(dir, "cpuacct.usage"))
		procs, err2 := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY, 0)
		if err1 == nil && err2 == nil {
			return &cpuMeter{usage: f, cgroup: dir, procs: procs, how: "cgroup"}
		}
		if f != nil {
			f.Close()
		}
		if procs != nil {
			procs.Close()
		}
		removeCgroup(dir)
	} else if pidsCgroup == "" {
		// A v2 cgroup of its own for the accounting alone.
		if dir, err := newCgroup("", true, nil); err == nil {
			f, err1 := os.Open(filepath.Join(dir, "cpu.stat"))
			procs, err2 := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY, 0)
			if err1 == nil && err2 == nil {
				return &cpuMeter{usage: f, v2: true, cgroup: dir, procs: procs, how: "cgroup"}
			}
			if f != nil {
				f.Close()
			}
			if procs != nil {
				procs.Close()
			}
			removeCgroup(dir)
		}
	}
	return &cpuMeter{how: "/proc"}
}

func (m *cpuMeter) close() {
	if m.usage != nil {
		m.usage.Close()
	}
	if m.procs != nil {
		m.procs.Close()
	}
	if m.cgroup != "" {
		removeCgroup(m.cgroup)
	}
}

// used is the CPU time of the call so far.
func (m *cpuMeter) used(namespaces bool) time.Duration {
	if m.usage != nil {
		if d, err := m.readCgroup(); err == nil {
			return d
		}
	}
	return procTreeCPU(namespaces)
}

func (m *cpuMeter) readCgroup() (time.Duration, error) {
	buf := make([]byte, 4096)
	n, err := m.usage.ReadAt(buf, 0)
	if n == 0 && err != nil {
		return 0, err
	}
	b := buf[:n]
	if !m.v2 {
		v, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
		return time.Duration(v), err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			us, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return time.Duration(us) * time.Microsecond, err
		}
	}
	return 0, errors.New("no usage_usec in cpu.stat")
}

// procTreeCPU is the CPU time of every process under the helper (utime,
// stime and the times of the children each has reaped) plus the children
// the helper itself reaped. A process reaped by a parent that ignores
// SIGCHLD is counted only while it ran at a measurement.
func procTreeCPU(namespaces bool) time.Duration {
	var ru unix.Rusage
	var total time.Duration
	if unix.Getrusage(unix.RUSAGE_CHILDREN, &ru) == nil {
		total = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for _, pid := range treePIDs(namespaces) {
		f := statFields(pid)
		// After the name: state(0) ppid(1) … utime(11) stime(12)
		// cutime(13) cstime(14).
		if len(f) < 15 {
			continue
		}
		var ticks int64
		for _, s := range f[11:15] {
			v, _ := strconv.ParseInt(s, 10, 64)
			ticks += v
		}
		total += time.Duration(ticks) * time.Second / clockTicks
	}
	return total
}

// treePIDs lists the processes under the helper: every other process of
// its PID namespace, or its descendants found through their parents.
func treePIDs(namespaces bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	parent := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		parent[pid] = ppid(pid)
	}
	var out []int
	for pid := range parent {
		if namespaces {
			out = append(out, pid)
			continue
		}
		for p, n := pid, 0; p > 1 && n < 64; p, n = parent[p], n+1 {
			if parent[p] == self {
				out = append(out, pid)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// reapWatching reaps children like reapUntil until pid exits, and every
// cpuPoll kills every process of the call once it has used budget of CPU
// time, setting exceeded. It must run on the thread that started the
// command: Landlock gives each thread of the helper a domain of its own,
// and its signal scoping lets a thread signal only processes of its own
// domain (the ones it started).
func reapWatching(pid int, m *cpuMeter, budget time.Duration, namespaces bool, exceeded *bool) syscall.WaitStatus {
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGCHLD)
	defer signal.Stop(sigc)
	t := time.NewTicker(cpuPoll)
	defer t.Stop()
	for {
		for {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if got == pid || (err != nil && !errors.Is(err, syscall.EINTR)) {
				return ws
			}
			if got <= 0 {
				break
			}
		}
		select {
		case <-sigc:
			continue
		case <-t.C:
		}
		if m.used(namespaces) >= budget {
			*exceeded = true
			killTree(namespaces)
		}
	}
}

// killTree sends SIGKILL to every process under the helper.
func killTree(namespaces bool) {
	if namespaces {
		_ = syscall.Kill(-1, syscall.SIGKILL) // as PID 1: all but itself
		return
	}
	for _, pid := range treePIDs(false) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
