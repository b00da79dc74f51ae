//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// forkMany starts up to n processes that sleep, as fast as it can, and
// prints how many it could start before the kernel refused one.
func forkMany(arg string) {
	n, _ := strconv.Atoi(arg)
	started := 0
	var pids []int
	for range n {
		pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "20"}, &syscall.ProcAttr{})
		if err != nil {
			fmt.Printf("fork refused: %v\n", err)
			break
		}
		pids = append(pids, pid)
		started++
	}
	fmt.Printf("started=%d\n", started)
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	os.Exit(0)
}

func confinedProbe(t *testing.T) Report {
	t.Helper()
	exe, _ := os.Executable()
	probe, err := Probe(exe, Policy{Network: true})
	if err != nil {
		t.Fatal(err)
	}
	if !probe.Landlock {
		t.Skipf("Landlock is not available on this system (ABI %d): %v", probe.ABI, probe.Notes)
	}
	return probe
}

// A descriptor the caller leaked (opened without O_CLOEXEC) does not reach
// the command: it starts with 0, 1 and 2 only.
func TestOnlyStandardFDs(t *testing.T) {
	probe := confinedProbe(t)
	fd, err := syscall.Open("/dev/null", syscall.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	for _, ns := range []bool{probe.Namespaces, false} {
		out, rep := runConfined(t, Policy{Namespaces: ns, Writable: []string{"/tmp"}, Network: true, Dir: "/"}, `ls /proc/self/fd | tr '\n' ' '`)
		// ls itself holds the directory it lists open: fd 3.
		if strings.TrimSpace(out) != "0 1 2 3" || rep.ExitCode != 0 {
			t.Fatalf("namespaces=%v: fds %q (leaked fd %d), report %+v", ns, out, fd, rep)
		}
	}
}

func TestLimits(t *testing.T) {
	probe := confinedProbe(t)
	exe, _ := os.Executable()
	base := Policy{Namespaces: probe.Namespaces, Writable: []string{"/tmp"}, Devices: DefaultDevices, Network: true, Dir: "/"}

	t.Run("fork bomb bounded", func(t *testing.T) {
		if !probe.Namespaces && os.Getuid() == 0 {
			t.Skip("root outside a user namespace is exempt from RLIMIT_NPROC")
		}
		p := base
		p.Limits = Limits{Procs: 40}
		out, rep := runConfinedEnv(t, p, []string{exe, "-test.run=^$"}, "FOYA_SANDBOX_TEST_FORK=1000")
		var started int
		i := strings.Index(out, "started=")
		if i < 0 {
			t.Fatalf("output %q report %+v", out, rep)
		}
		if _, err := fmt.Sscanf(out[i:], "started=%d", &started); err != nil {
			t.Fatalf("output %q report %+v", out, rep)
		}
		if started >= 40 || started < 20 || !strings.Contains(out, "resource temporarily unavailable") {
			t.Fatalf("started %d processes under a limit of 40:\n%s", started, out)
		}
		t.Logf("fork bomb: %d processes started, then: %s", started, strings.SplitN(out, "\n", 2)[0])
	})

	t.Run("huge file refused", func(t *testing.T) {
		dir := t.TempDir()
		f := filepath.Join(dir, "big")
		p := base
		p.Writable = []string{dir}
		p.Limits = Limits{FileSize: 1 << 20}
		out, rep := runConfined(t, p, `head -c 3000000 /dev/zero > `+f+`; echo "rc=$?"`)
		fi, err := os.Stat(f)
		if err != nil || fi.Size() > 1<<20 || strings.Contains(out, "rc=0") {
			t.Fatalf("file %v %v, output %q report %+v", fi, err, out, rep)
		}
		t.Logf("huge write: %d bytes kept, %s", fi.Size(), strings.TrimSpace(out))
	})

	t.Run("CPU loop killed", func(t *testing.T) {
		p := base
		p.Limits = Limits{CPUSeconds: 1}
		start := time.Now()
		out, rep := runConfined(t, p, `while :; do :; done`)
		if d := time.Since(start); d > 20*time.Second || rep.Signal == "" {
			t.Fatalf("after %s: output %q report %+v", d, out, rep)
		}
		t.Logf("CPU loop: %s after %s", rep.Signal, time.Since(start).Round(time.Millisecond))
	})

	t.Run("address space", func(t *testing.T) {
		p := base
		p.Limits = Limits{AddressSpace: 64 << 20}
		out, rep := runConfined(t, p, `x=$(head -c 100000000 /dev/zero | tr '\0' a); echo "len=${#x}"`)
		if strings.Contains(out, "len=100000000") {
			t.Fatalf("100 MB string under a 64 MiB address space: %q %+v", out, rep)
		}
	})

	t.Run("stage keeps the command's own argv and env", func(t *testing.T) {
		p := base
		p.Limits = DefaultLimits()
		out, _ := runConfined(t, p, `echo "$0 $PATH"; ulimit -u -f -t`)
		if !strings.Contains(out, "bash /usr/local/bin") || !strings.Contains(out, strconv.Itoa(DefaultMaxCPUSeconds)) {
			t.Fatalf("output %q", out)
		}
	})
}

func runConfinedEnv(t *testing.T, p Policy, argv []string, env ...string) (string, Report) {
	t.Helper()
	exe, _ := os.Executable()
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	p.Argv, p.Env = argv, env
	p.UID, p.GID = os.Getuid(), os.Getgid()
	pr, err := Start(exe, p, out)
	if err != nil {
		t.Fatal(err)
	}
	_ = pr.Cmd.Wait()
	rep, err := pr.Report()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out.Name())
	return string(b), rep
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"off": 0, "0": 0, "1024": 1024, "4G": 4 << 30, "16GiB": 16 << 30, "512m": 512 << 20, "2K": 2048} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"x", "-1", "4Q", "99999999999T"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}
