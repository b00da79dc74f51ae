//go:build linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The tools plugin runs under WrapExec and starts its bash calls under the
// helper from there: namespaces must still work one level down, and the
// wrapped process must see the hidden directory masked.
func TestWrapExecNested(t *testing.T) {
	if os.Getenv("FOYA_NESTED_INNER") != "" {
		return
	}
	probe := confinedProbe(t)
	if !probe.Namespaces {
		t.Skip("no user namespaces")
	}
	base := outsideTmp(t)
	data := filepath.Join(base, "data")
	keep := filepath.Join(data, "scratch")
	if err := os.MkdirAll(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "secret"), []byte("s3"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	inner := exec.Command(exe, "-test.run=^TestWrapExecInner$", "-test.v")
	inner.Env = []string{"FOYA_NESTED_INNER=1", "FOYA_NESTED_DATA=" + data, "PATH=" + os.Getenv("PATH")}
	cmd, err := WrapExec(exe, Policy{Hidden: []string{data}, Expose: []string{keep}, UID: os.Getuid(), GID: os.Getgid()}, inner)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	t.Logf("inner:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "INNER-OK") {
		t.Fatal("inner checks failed")
	}
}

func TestWrapExecInner(t *testing.T) {
	data := os.Getenv("FOYA_NESTED_DATA")
	if data == "" {
		t.Skip("runs under TestWrapExecNested")
	}
	if b, err := os.ReadFile(filepath.Join(data, "secret")); err == nil {
		t.Fatalf("secret readable: %q", b)
	}
	if _, err := os.Stat(filepath.Join(data, "scratch")); err != nil {
		t.Fatalf("exposed dir: %v", err)
	}
	exe, _ := os.Executable()
	// Not even root in its user namespace can lift the mask.
	if err := syscall.Unmount(data, syscall.MNT_DETACH); err == nil {
		t.Fatal("the wrapped process unmounted the mask")
	}
	rep, err := probe(exe, Policy{Network: true, Hidden: []string{data}})
	b, _ := json.Marshal(rep)
	t.Logf("nested probe: %s %v", b, err)
	if err != nil || !rep.Namespaces {
		t.Fatalf("nested namespaces: %s %v", b, err)
	}
	fmt.Println("INNER-OK")
}
