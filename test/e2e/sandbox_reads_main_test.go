//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// Two sessions on two projects of one kernel: session A's bash cannot read
// session B's project (file or listing), B's TMPDIR, or a file under $HOME,
// and still runs its shell, git and go in its own project (docs/sandbox.md,
// "Reads").
func TestSandboxReadsOtherSession(t *testing.T) {
	t.Parallel()
	base := outsideTmp(t)
	data := filepath.Join(base, "data")
	projA, projB := filepath.Join(base, "proj-a"), filepath.Join(base, "proj-b")
	for _, d := range []string{projA, projB} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(projB, "plans.txt"), []byte("session-b-secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	homeDir, err := os.MkdirTemp(home, ".foya-e2e-read-")
	if err != nil {
		t.Skipf("cannot write under $HOME: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(homeDir) })
	if err := os.WriteFile(filepath.Join(homeDir, "credentials"), []byte("home-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	fake := openaitest.New(t)
	k := startKernel(t, data)
	namespaces := k.requireLandlock(t)
	_, detail := k.sandboxState(t)
	if !strings.Contains(detail, "reads only in") {
		t.Errorf("sandboxDetail does not state the read confinement: %s", detail)
	}

	sidB := k.session(t, fake.BaseURL(), projB, "BYPASS")
	ms := k.runTools(t, fake, sidB, toolCall("b1", "bash", map[string]any{"command": `echo tmp-b-secret > "$TMPDIR/note" && echo "tmpdir=$TMPDIR" && cat plans.txt`}))
	outB := ms[0].Text
	if !strings.Contains(outB, "session-b-secret") || !strings.Contains(outB, "tmpdir=") {
		t.Fatalf("session B cannot read its own project:\n%s", outB)
	}
	tmpB := strings.Fields(outB[strings.Index(outB, "tmpdir=")+len("tmpdir="):])[0]

	// The tools plugin's PATH is /usr/local/bin:/usr/bin:/bin: go by its path.
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = "go"
	}
	goBin, _ = filepath.EvalSymlinks(goBin)
	sidA := k.session(t, fake.BaseURL(), projA, "BYPASS")
	script := `cat ` + filepath.Join(projB, "plans.txt") + ` || echo refused-file
ls ` + projB + ` || echo refused-dir
cat ` + filepath.Join(tmpB, "note") + ` || echo refused-tmp
cat ` + filepath.Join(homeDir, "credentials") + ` || echo refused-home
grep -q localhost /etc/hosts && echo read-hosts
git init -q . && git status --short && echo ran-git
` + goBin + ` version >/dev/null && echo ran-go
echo mine > mine.txt && cat mine.txt`
	ms = k.runTools(t, fake, sidA, toolCall("a1", "bash", map[string]any{"command": script}))
	out := ms[0].Text
	t.Logf("session A's bash:\n%s", out)
	for _, bad := range []string{"session-b-secret", "tmp-b-secret", "home-secret", "plans.txt\n"} {
		if strings.Contains(out, bad) {
			t.Errorf("session A read %q", bad)
		}
	}
	for _, want := range []string{"refused-file", "refused-dir", "refused-tmp", "refused-home", "read-hosts", "ran-git", "mine", "Permission denied"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	if goBin != "" && !strings.HasPrefix(goBin, home+"/") && !strings.Contains(out, "ran-go") {
		t.Errorf("go does not run in the sandbox")
	}
	if namespaces && !strings.Contains(out, "No such file") {
		t.Errorf("session B's TMPDIR is not masked:\n%s", out)
	}
}

// --tool-max-cpu bounds the CPU time of a whole bash call: 40 children
// that each stay under it pass it together and the call is killed with a
// clear error; a normal call is unaffected.
func TestBashCPUBudgetPerCall(t *testing.T) {
	base := outsideTmp(t)
	proj := filepath.Join(base, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := openaitest.New(t)
	k := startKernel(t, filepath.Join(base, "data"), "--tool-max-cpu", "2s")
	k.requireLandlock(t)
	if _, detail := k.sandboxState(t); !strings.Contains(detail, "2 s of CPU per call") {
		t.Errorf("sandboxDetail: %s", detail)
	}
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	ms := k.runTools(t, fake, sid,
		toolCall("c1", "bash", map[string]any{"command": `for i in $(seq 40); do timeout 20 sh -c 'while :; do :; done' & done; wait; echo all-done`}),
		toolCall("c2", "bash", map[string]any{"command": `echo fine`}))
	t.Logf("burn: %s", ms[0].Text)
	if !ms[0].IsError || !strings.Contains(ms[0].Text, "CPU time limit of 2s for this call exceeded") || strings.Contains(ms[0].Text, "all-done") {
		t.Errorf("the CPU burn was not stopped: %+v", ms[0])
	}
	if ms[1].IsError || !strings.Contains(ms[1].Text, "fine") {
		t.Errorf("a normal call: %+v", ms[1])
	}
}
