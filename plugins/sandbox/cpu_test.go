//go:build linux

package sandbox

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// burnMany starts 40 children that each burn CPU for up to 20 s: each
// stays under a 2 s RLIMIT_CPU long enough for the call as a whole to pass
// a 2 s budget, so only the per-call budget stops it.
const burnMany = `for i in $(seq 40); do timeout 20 sh -c 'while :; do :; done' & done; wait; echo all-done`

// The CPU time of a call counts every process it starts: many short
// burners together pass a 2 s budget and the call is killed, with
// namespaces and without; a normal call is unaffected.
func TestCPUBudgetPerCall(t *testing.T) {
	probe := confinedProbe(t)
	for _, ns := range []bool{probe.Namespaces, false} {
		p := Policy{Namespaces: ns, Writable: []string{"/tmp"}, Devices: DefaultDevices, Network: true, Dir: "/", Limits: Limits{CPUSeconds: 2}}
		out, rep := runConfined(t, p, burnMany)
		t.Logf("namespaces=%v: output %q report %+v", ns, out, rep)
		if !rep.CPUExceeded || strings.Contains(out, "all-done") || rep.ExitCode == 0 {
			t.Errorf("namespaces=%v: the call was not stopped by its CPU budget: %q %+v", ns, out, rep)
		}
		if rep.CPUMeter == "" {
			t.Errorf("no CPU meter reported")
		}
		out, rep = runConfined(t, p, `echo fine`)
		if rep.CPUExceeded || rep.ExitCode != 0 || out != "fine\n" {
			t.Errorf("namespaces=%v: a normal call: %q %+v", ns, out, rep)
		}
	}
}

// Without a cgroup, the /proc measure sees every process below the helper,
// grandchildren included.
func TestProcTreeCPU(t *testing.T) {
	before := procTreeCPU(false)
	cmd := exec.Command("sh", "-c", `sh -c 'while :; do :; done' & wait`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	deadline := time.Now().Add(60 * time.Second)
	for procTreeCPU(false)-before < 300*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("the burning grandchild was not counted: %s", procTreeCPU(false)-before)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(treePIDs(false)) < 2 {
		t.Errorf("tree %v", treePIDs(false))
	}
}
