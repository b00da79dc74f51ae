package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// reportFD is the helper's descriptor for the JSON Report.
const reportFD = 3

// writeRights are the Landlock rights the sandbox handles: every way to
// create, change, move or delete a file. Reading and executing are not
// handled (the data directory is hidden by the mount namespace instead).
const writeRights = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
	ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock |
	ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate

// readRights are the rights handled besides writeRights when reads are
// confined.
const readRights = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir

// helperMain is `<exe> __sandbox POLICY`. Its exit code is the command's.
func helperMain(args []string) int {
	// One thread starts, watches and kills the command's processes: each
	// thread gets a Landlock domain of its own, and a domain may signal
	// only the processes it contains (signal scoping).
	runtime.LockOSThread()
	// Every descriptor beyond 0-2 the helper inherited (the kernel's or a
	// plugin's strays, the report pipe) is closed when the command starts.
	closeStrayFDs()
	rep := Report{ExitCode: -1}
	var p Policy
	defer func() { writeReport(p, rep) }()
	fail := func(format string, a ...any) int {
		rep.Error = fmt.Sprintf(format, a...)
		fmt.Fprintf(os.Stderr, "foya sandbox: %s\n", rep.Error)
		return 126
	}
	if err := decodePolicy(args, &p); err != nil {
		return fail("%v", err)
	}
	if v, err := ll.LandlockGetABIVersion(); err == nil {
		rep.ABI = v
	}
	lim := openCallLimits(p, &rep)
	defer lim.close()
	if err := confineHelper(p, &rep); err != nil {
		return fail("%v", err)
	}
	env := p.Env
	if p.InheritEnv {
		env = os.Environ()
	}
	path, err := lookPath(p.Argv[0], env)
	if err != nil {
		return fail("%s: %v", p.Argv[0], err)
	}
	if p.Exec {
		return fail("%v", execCommand(p, path, env))
	}
	cmd, err := helperCommand(p, path, env, lim)
	if err != nil {
		return fail("%v", err)
	}
	if err := cmd.Start(); err != nil {
		return fail("start %s: %v", p.Argv[0], err)
	}
	rep.Started = true
	status := waitCommand(cmd, p, lim.meter, &rep)
	return finishReport(p, status, &rep)
}

// writeReport writes the helper's Report to its report descriptor,
// unless the policy asks for none or the helper became the command.
func writeReport(p Policy, rep Report) {
	if p.NoReport || p.Exec {
		return
	}
	f := os.NewFile(reportFD, "report")
	if f != nil {
		_ = json.NewEncoder(f).Encode(rep)
		_ = f.Close()
	}
}

// decodePolicy reads the helper's single argument into p.
func decodePolicy(args []string, p *Policy) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: %s POLICY", HelperCommand)
	}
	if err := json.Unmarshal([]byte(args[0]), p); err != nil {
		return fmt.Errorf("decode policy: %v", err)
	}
	if len(p.Argv) == 0 {
		return errors.New("empty command")
	}
	return nil
}

// callLimits are the cgroups bounding one call: a pids cgroup (with its
// cgroup.procs opened before Landlock would refuse it) and a CPU meter.
type callLimits struct {
	cgroup      string   // the pids cgroup the command joins; "" without one
	remove      string   // the pids cgroup to remove at the end, if created
	cgroupProcs *os.File // cgroup's cgroup.procs, opened for the stage
	meter       *cpuMeter
}

// openCallLimits sets up the pids cgroup and the CPU meter the policy's
// limits ask for, noting in rep how each limit is enforced.
func openCallLimits(p Policy, rep *Report) *callLimits {
	lim := &callLimits{}
	if p.Limits.Procs > 0 && !p.Exec {
		// A pids cgroup bounds the command's processes for every user
		// (RLIMIT_NPROC does not bind root); without one, the stage sets
		// RLIMIT_NPROC.
		cgroup, err := newPidsCgroup(p.Limits.Procs)
		if err == nil {
			lim.remove = cgroup
			// Opened now: Landlock will refuse it later.
			lim.cgroupProcs, err = os.OpenFile(filepath.Join(cgroup, "cgroup.procs"), os.O_WRONLY, 0)
		}
		if err == nil {
			lim.cgroup = cgroup
			rep.ProcLimit = "pids cgroup"
		} else {
			lim.cgroupProcs = nil
			rep.ProcLimit = "RLIMIT_NPROC"
			rep.Notes = append(rep.Notes, "no pids cgroup: "+err.Error())
		}
	}
	if p.Limits.CPUSeconds > 0 && !p.Exec {
		// The CPU time of the whole call, every process it starts
		// included (RLIMIT_CPU counts per process).
		lim.meter = newCPUMeter(lim.cgroup)
		rep.CPUMeter = lim.meter.how
	}
	return lim
}

// close releases the meter, the opened cgroup.procs and the pids cgroup.
func (l *callLimits) close() {
	if l.meter != nil {
		l.meter.close()
	}
	if l.cgroupProcs != nil {
		l.cgroupProcs.Close()
	}
	if l.remove != "" {
		removeCgroup(l.remove)
	}
}

// confineHelper sets up the mount namespace (or makes the helper a
// child subreaper without one) and applies Landlock to the helper.
func confineHelper(p Policy, rep *Report) error {
	if p.Namespaces {
		rep.Namespaces = true
		if err := setupMounts(p, rep); err != nil {
			return err
		}
		// Drop the ambient CAP_SYS_ADMIN on every thread, so the command
		// (not root) starts without capabilities. Landlock forbids
		// mount and umount to it in any case.
		if _, _, e := psx.Syscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 {
			return fmt.Errorf("drop ambient capabilities: %v", e)
		}
	} else if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		rep.Notes = append(rep.Notes, "no child subreaper: "+err.Error())
	}
	if err := restrict(p, rep); err != nil {
		return fmt.Errorf("landlock: %v", err)
	}
	return nil
}

// execCommand replaces the helper with the command (Policy.Exec). It
// returns only on failure.
func execCommand(p Policy, path string, env []string) error {
	// Root in the user namespace keeps its capabilities in it across
	// exec: without CAP_SYS_ADMIN in the bounding set it cannot unmount
	// the masks. (Dropping all of root's capabilities with
	// SECBIT_NOROOT would also stop the plugin from mapping its id into
	// the user namespaces of its bash calls.)
	if err := dropSysAdmin(); err != nil && p.Namespaces {
		return fmt.Errorf("drop CAP_SYS_ADMIN: %v", err)
	}
	if p.Dir != "" {
		if err := os.Chdir(p.Dir); err != nil {
			return err
		}
	}
	err := syscall.Exec(path, p.Argv, env)
	return fmt.Errorf("exec %s: %v", path, err)
}

// helperCommand builds the command to start: the command itself, or a
// short stage that applies the limits and then executes it.
func helperCommand(p Policy, path string, env []string, lim *callLimits) (*exec.Cmd, error) {
	cmd := &exec.Cmd{Path: path, Args: p.Argv}
	if !p.Limits.IsZero() {
		// A short stage applies the limits and then executes the command.
		st := stage{Limits: p.Limits, PidsCgroup: lim.cgroupProcs != nil}
		var files []*os.File
		if lim.cgroupProcs != nil {
			st.Cgroups, files = append(st.Cgroups, lim.cgroup), append(files, lim.cgroupProcs)
		}
		if lim.meter != nil && lim.meter.procs != nil {
			st.Cgroups, files = append(st.Cgroups, lim.meter.cgroup), append(files, lim.meter.procs)
		}
		enc, err := json.Marshal(st)
		if err != nil {
			return nil, fmt.Errorf("encode limits: %v", err)
		}
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the sandbox helper for the limits: %v", err)
		}
		cmd = &exec.Cmd{Path: self, Args: append([]string{self, limitsCommand, string(enc), path}, p.Argv...)}
		cmd.ExtraFiles = files // fds 3, 4 of the stage
	}
	cmd.Dir, cmd.Env = p.Dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	if p.Stdin {
		cmd.Stdin = os.Stdin
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}

// waitCommand reaps the started command, watching its CPU budget when
// there is a meter.
func waitCommand(cmd *exec.Cmd, p Policy, meter *cpuMeter, rep *Report) syscall.WaitStatus {
	if meter == nil {
		return reapUntil(cmd.Process.Pid)
	}
	budget := time.Duration(p.Limits.CPUSeconds) * time.Second
	status := reapWatching(cmd.Process.Pid, meter, budget, p.Namespaces, &rep.CPUExceeded)
	if meter.used(p.Namespaces) >= budget {
		rep.CPUExceeded = true
	}
	return status
}

// finishReport records how the command ended and ends its leftovers; it
// returns the helper's exit code.
func finishReport(p Policy, status syscall.WaitStatus, rep *Report) int {
	switch {
	case status.Signaled():
		rep.Signal = status.Signal().String()
	default:
		rep.ExitCode = status.ExitStatus()
	}
	rep.Leftover = endLeftovers(p.Namespaces, rep.Proc)
	if rep.CPUExceeded {
		rep.Leftover = nil // killed for the budget, not left behind
	}
	if rep.ExitCode < 0 {
		return 128 + int(status.Signal())
	}
	return rep.ExitCode
}

// lookPath finds name on the PATH of env (the command's, not the helper's).
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// setupMounts makes the mount namespace private, masks the hidden
// directories and mounts /proc for the new PID namespace.
func setupMounts(p Policy, rep *Report) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	for _, h := range p.Hidden {
		if err := mask(h, p.Expose); err != nil {
			return fmt.Errorf("hide %s: %w", h, err)
		}
	}
	rep.Masked = true
	if p.Exec {
		return nil // no PID namespace of its own: keep the system's /proc
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		rep.Notes = append(rep.Notes, "no private /proc: "+err.Error())
	} else {
		rep.Proc = true
	}
	return nil
}

// mask mounts an empty read-only tmpfs over dir, with the exposed
// directories inside it bound back at their paths.
func mask(dir string, expose []string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		// A secret file outside the data directory (a token file, a TLS
		// key): /dev/null, read-only, over it.
		if err := unix.Mount("/dev/null", dir, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind /dev/null: %w", err)
		}
		return unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, "")
	}
	// Open what stays visible before the tmpfs covers it.
	type keep struct {
		rel string
		fd  int
	}
	var keeps []keep
	defer func() {
		for _, k := range keeps {
			_ = unix.Close(k.fd)
		}
	}()
	for _, e := range expose {
		rel, err := filepath.Rel(dir, e)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		fd, err := unix.Open(e, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", e, err)
		}
		keeps = append(keeps, keep{rel, fd})
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64k,mode=0755"); err != nil {
		return fmt.Errorf("mount tmpfs: %w", err)
	}
	for _, k := range keeps {
		target := filepath.Join(dir, k.rel)
		if err := os.MkdirAll(target, 0o755); err != nil {
			return err
		}
		if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", k.fd), target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s back: %w", target, err)
		}
	}
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64k,mode=0755"); err != nil {
		return fmt.Errorf("make tmpfs read-only: %w", err)
	}
	return nil
}

// restrict applies the Landlock ruleset of p in best-effort mode.
func restrict(p Policy, rep *Report) error {
	if rep.ABI < 1 {
		rep.Notes = append(rep.Notes, "Landlock is not available")
		return nil
	}
	if p.NoLandlock {
		// (A Landlock domain would also forbid the nested helpers of the
		// tools plugin's bash calls to mount their masks.)
		return nil
	}
	cfg := landlock.Config{HandledAccessFS: writeRights, Scoped: ll.ScopeSignal}
	var rules []landlock.Rule
	if !p.Network {
		cfg.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
		cfg.Scoped |= ll.ScopeAbstractUnixSocket
	}
	if len(p.Writable) > 0 {
		rules = append(rules, landlock.RWDirs(p.Writable...).WithRefer().IgnoreIfMissing())
	}
	devRights := landlock.AccessFSSet(ll.AccessFSWriteFile | ll.AccessFSTruncate)
	if p.ConfineReads {
		cfg.HandledAccessFS |= readRights
		devRights |= ll.AccessFSReadFile
		dirs, files := splitReadable(append(SystemReadable(), p.Readable...))
		if self, err := os.Executable(); err == nil {
			files = append(files, self) // the limits stage
		}
		if len(dirs) > 0 {
			rules = append(rules, landlock.RODirs(dirs...).IgnoreIfMissing())
		}
		if len(files) > 0 {
			rules = append(rules, landlock.ROFiles(files...).IgnoreIfMissing())
		}
	}
	if len(p.Devices) > 0 {
		rules = append(rules, landlock.PathAccess(devRights, p.Devices...).IgnoreIfMissing())
	}
	if err := cfg.BestEffort().Restrict(rules...); err != nil {
		return err
	}
	rep.Landlock = true
	rep.ReadsConfined = p.ConfineReads
	if !p.Network && rep.ABI < 4 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("Landlock ABI %d cannot deny TCP", rep.ABI))
	}
	return nil
}

// dropSysAdmin removes CAP_SYS_ADMIN from the bounding and inheritable
// sets of every thread (the inheritable one holds it because it was raised
// as an ambient capability), so the program executed next cannot get it
// back, even as root of the user namespace.
func dropSysAdmin() error {
	if _, _, e := psx.Syscall3(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, capSysAdmin, 0); e != 0 {
		return e
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	data[capSysAdmin/32].Inheritable &^= 1 << (capSysAdmin % 32)
	if _, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return e
	}
	return nil
}

// splitReadable sorts read roots into directories and other files (a
// directory right on a file is refused by Landlock); missing ones go.
func splitReadable(paths []string) (dirs, files []string) {
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			dirs = appendPath(dirs, p)
		default:
			files = appendPath(files, p)
		}
	}
	return dirs, files
}
