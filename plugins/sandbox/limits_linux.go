package sandbox

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// limitsMain is `<exe> __sandbox_limits LIMITS PATH ARGV...`: it sets the
// resource limits and executes PATH with ARGV and its own environment.
func limitsMain(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "foya sandbox: %s\n", fmt.Sprintf(format, a...))
		return 126
	}
	if len(args) < 3 {
		return fail("usage: %s LIMITS PATH ARGV...", limitsCommand)
	}
	var st stage
	if err := json.Unmarshal([]byte(args[0]), &st); err != nil {
		return fail("decode limits: %v", err)
	}
	// Join the cgroups the helper made, through the cgroup.procs files it
	// opened as fds 3, 4, … before Landlock applied ("0" is the writer).
	for i, cg := range st.Cgroups {
		f := os.NewFile(uintptr(3+i), "cgroup.procs")
		_, err := f.Write([]byte("0"))
		f.Close()
		if err != nil {
			return fail("join the cgroup %s: %v", cg, err)
		}
	}
	if st.PidsCgroup {
		st.Limits.Procs = 0
	}
	if err := applyLimits(st.Limits); err != nil {
		return fail("%v", err)
	}
	err := syscall.Exec(args[1], args[2:], os.Environ())
	return fail("exec %s: %v", args[1], err)
}

// stage is what the limits stage gets from the helper.
type stage struct {
	Limits Limits `json:"limits"`
	// Cgroups are the cgroup directories to join, through fds 3, 4, ….
	Cgroups []string `json:"cgroups,omitempty"`
	// PidsCgroup says the first of them enforces Procs (not RLIMIT_NPROC).
	PidsCgroup bool `json:"pidsCgroup,omitempty"`
}

// cgroupPrefix names the pids cgroups the helper makes.
const cgroupPrefix = "foya-sandbox-"

// newPidsCgroup makes a pids cgroup beside this process's own with
// pids.max = max and returns its directory, or an error when the system
// offers none this user may make (no pids controller, cgroup v2 without
// delegation).
func newPidsCgroup(max int) (string, error) {
	return newCgroup("pids", true, func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0)
	})
}

// newCgroup makes a cgroup beside this process's own in the hierarchy of
// controller (cgroup v1), or in the unified hierarchy when v2 is set
// (controller "" takes only that one), runs setup in it and returns its
// directory. Empty leftovers of killed helpers are removed on the way.
func newCgroup(controller string, v2 bool, setup func(dir string) error) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var bases []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case controller != "" && slices.Contains(strings.Split(f[1], ","), controller):
			bases = append(bases, filepath.Join("/sys/fs/cgroup", f[1], f[2]))
		case v2 && f[0] == "0" && f[1] == "":
			bases = append(bases, filepath.Join("/sys/fs/cgroup", f[2]), filepath.Join("/sys/fs/cgroup/unified", f[2]))
		}
	}
	var last error = fmt.Errorf("no %s cgroup controller", cmp.Or(controller, "cgroup v2"))
	for _, base := range bases {
		sweepCgroups(base)
		dir := filepath.Join(base, fmt.Sprintf("%s%d-%d", cgroupPrefix, os.Getpid(), time.Now().UnixNano()))
		if err := os.Mkdir(dir, 0o755); err != nil {
			last = err
			continue
		}
		if setup != nil {
			if err := setup(dir); err != nil {
				_ = os.Remove(dir)
				last = err
				continue
			}
		}
		return dir, nil
	}
	return "", last
}

// sweepCgroups removes the empty cgroups killed helpers left in base. A
// cgroup younger than a minute is spared: another helper may have just
// made it and not yet moved its command in (removing it then makes the
// join fail with ENODEV). Removing one with processes in it fails.
func sweepCgroups(base string) {
	olds, err := filepath.Glob(filepath.Join(base, cgroupPrefix+"*"))
	if err != nil {
		return
	}
	for _, o := range olds {
		name := strings.TrimPrefix(filepath.Base(o), cgroupPrefix)
		i := strings.LastIndexByte(name, '-')
		if i < 0 {
			continue
		}
		made, err := strconv.ParseInt(name[i+1:], 10, 64)
		if err != nil || time.Since(time.Unix(0, made)) < time.Minute {
			continue
		}
		_ = os.Remove(o)
	}
}

// removeCgroup removes the helper's cgroup once its processes are gone;
// when the kernel still holds it busy, the next helper's sweep removes it.
func removeCgroup(dir string) { _ = os.Remove(dir) }

// applyLimits sets soft and hard limits of the calling process, which
// its children inherit and cannot raise.
func applyLimits(l Limits) error {
	set := func(res int, name string, v uint64) error {
		if v == 0 {
			return nil
		}
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("set %s to %d: %w", name, v, err)
		}
		return nil
	}
	if l.Procs > 0 {
		// RLIMIT_NPROC counts the user's tasks in this user namespace
		// (the whole system's without one): the limit is what runs now
		// plus Procs.
		if err := set(unix.RLIMIT_NPROC, "RLIMIT_NPROC", uint64(l.Procs+userTasks(os.Getuid()))); err != nil {
			return err
		}
	}
	if err := set(unix.RLIMIT_AS, "RLIMIT_AS", l.AddressSpace); err != nil {
		return err
	}
	if err := set(unix.RLIMIT_FSIZE, "RLIMIT_FSIZE", l.FileSize); err != nil {
		return err
	}
	return set(unix.RLIMIT_CPU, "RLIMIT_CPU", l.CPUSeconds)
}

// userTasks counts the tasks (threads) of uid visible in /proc.
func userTasks(uid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		u, threads := statusUIDThreads("/proc/" + e.Name() + "/status")
		if u == uid {
			n += threads
		}
	}
	return n
}

func statusUIDThreads(path string) (uid, threads int) {
	f, err := os.Open(path)
	if err != nil {
		return -1, 0
	}
	defer f.Close()
	uid = -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				uid, _ = strconv.Atoi(f[0])
			}
		} else if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			threads, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return uid, threads
}

// closeStrayFDs marks every descriptor from 3 up close-on-exec, so the
// command starts with only 0, 1 and 2 (close_range, Linux 5.11+; else one
// by one from /proc/self/fd).
func closeStrayFDs() {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
