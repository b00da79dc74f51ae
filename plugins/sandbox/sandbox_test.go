//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	MaybeHelper()
	if n := os.Getenv("FOYA_SANDBOX_TEST_FORK"); n != "" {
		forkMany(n) // the fork bomb of TestLimits
	}
	os.Exit(m.Run())
}

// outsideTmp is a fresh directory that is not under /tmp (which confined
// commands may write), so that writes to it must be refused.
func outsideTmp(t *testing.T) string {
	t.Helper()
	for _, base := range []string{"/var/tmp", "."} {
		dir, err := os.MkdirTemp(base, "foya-sandbox-test-")
		if err == nil {
			abs, _ := filepath.Abs(dir)
			real, _ := filepath.EvalSymlinks(abs)
			t.Cleanup(func() { os.RemoveAll(real) })
			return real
		}
	}
	t.Fatal("no writable directory outside /tmp")
	return ""
}

func runConfined(t *testing.T, p Policy, script string) (string, Report) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	p.Argv = []string{"bash", "-c", script}
	p.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
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

func TestConfinedWritesHiddenDirAndLeftovers(t *testing.T) {
	exe, _ := os.Executable()
	probe, err := Probe(exe, Policy{Network: true})
	if err != nil {
		t.Fatal(err)
	}
	if !probe.Landlock {
		t.Skipf("Landlock is not available on this system (ABI %d): %v", probe.ABI, probe.Notes)
	}
	base := outsideTmp(t)
	proj := filepath.Join(base, "proj")
	sib := filepath.Join(base, "sibling")
	data := filepath.Join(base, "data")
	scratch := filepath.Join(data, "scratch", "ses_1")
	for _, d := range []string{proj, sib, scratch} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "connections.json"), []byte(`{"apiKey":"sk-secret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(sib, "token")
	if err := os.WriteFile(token, []byte("tok-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := Policy{Namespaces: probe.Namespaces, Writable: []string{proj, "/tmp"}, Devices: DefaultDevices, Hidden: []string{data, token}, Network: true, Dir: proj}
	out, rep := runConfined(t, p, `
cat `+token+`
echo in > `+proj+`/ok && echo wrote-proj
echo out > `+sib+`/bad && echo wrote-sibling
echo x > /dev/null && echo wrote-null
f=$(mktemp /tmp/foya-sb-XXXXXX) && echo wrote-tmp && rm -f "$f"
cat `+data+`/connections.json
echo y > `+data+`/planted && echo wrote-data
exit 3`)
	t.Logf("output:\n%s\nreport: %+v", out, rep)
	for _, want := range []string{"wrote-proj", "wrote-null", "wrote-tmp"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
	if !probe.Namespaces {
		t.Logf("user namespaces unavailable: the data directory stays readable here")
	}
	bad := []string{"wrote-sibling", "wrote-data"}
	if probe.Namespaces {
		bad = append(bad, "sk-secret", "tok-secret")
	}
	for _, bad := range bad {
		if strings.Contains(out, bad) {
			t.Errorf("confinement let through %s", bad)
		}
	}
	if _, err := os.Stat(filepath.Join(sib, "bad")); err == nil {
		t.Error("sibling file exists")
	}
	if rep.ExitCode != 3 {
		t.Errorf("exit code %d", rep.ExitCode)
	}

	// A scratch directory inside the hidden data directory stays usable.
	p.Writable, p.Expose, p.Dir = []string{scratch}, []string{scratch}, scratch
	out, rep = runConfined(t, p, `echo s > s.txt && cat s.txt && echo "[$(ls ../..)]"; cat ../../connections.json; sleep 30 & echo started`)
	t.Logf("scratch output:\n%s\nreport: %+v", out, rep)
	if !strings.Contains(out, "s\n") || strings.Contains(out, "sk-secret") {
		t.Errorf("scratch session output %q", out)
	}
	if probe.Namespaces && !strings.Contains(out, "[scratch]") {
		t.Errorf("data directory not masked: %q", out)
	}
	if len(rep.Leftover) != 1 || !strings.Contains(rep.Leftover[0], "sleep 30") {
		t.Errorf("leftover = %q", rep.Leftover)
	}
	if b, err := os.ReadFile(filepath.Join(scratch, "s.txt")); err != nil || string(b) != "s\n" {
		t.Errorf("scratch file = %q, %v", b, err)
	}
}
