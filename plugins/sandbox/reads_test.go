//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// With ConfineReads, a command reads its own project, the system and its
// toolchains, and nothing else: not a sibling project, not a file under
// $HOME outside its roots.
func TestConfinedReads(t *testing.T) {
	probe := confinedProbe(t)
	base := outsideTmp(t)
	proj, other := filepath.Join(base, "proj"), filepath.Join(base, "other")
	for _, d := range []string{proj, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, "secret.txt"), []byte("other-session-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	homeDir, err := os.MkdirTemp(home, ".foya-read-test-")
	if err != nil {
		t.Skipf("cannot write under $HOME: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(homeDir) })
	if err := os.WriteFile(filepath.Join(homeDir, "creds"), []byte("home-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", proj).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(proj, "main.txt"), []byte("own-file"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	goBin := filepath.Join(strings.TrimSpace(string(out)), "bin")
	path := goBin + ":/usr/local/bin:/usr/bin:/bin"
	for _, ns := range []bool{probe.Namespaces, false} {
		p := Policy{
			Namespaces: ns, ConfineReads: true, Writable: []string{proj, "/tmp"}, Devices: DefaultDevices,
			Readable: append(ToolchainReadable(path, home, nil), HomeReadable(home)...), Network: true, Dir: proj,
		}
		out, rep := runConfinedEnv(t, p, []string{"bash", "-c", `
cat main.txt && echo " read-own"
cat ` + other + `/secret.txt || echo refused-other-file
ls ` + other + ` || echo refused-other-dir
cat ` + homeDir + `/creds || echo refused-home-file
ls ` + home + ` >/dev/null || echo refused-home-dir
grep -q localhost /etc/hosts && echo read-etc-hosts
go version && echo ran-go
sh -c 'echo ran-sh'
git status --short && echo ran-git
echo t > /tmp/foya-read-$$ && cat /tmp/foya-read-$$ && rm /tmp/foya-read-$$ && echo tmp-ok
`}, "PATH="+path, "HOME="+home)
		t.Logf("namespaces=%v output:\n%s\nreport: %+v", ns, out, rep)
		if !rep.ReadsConfined {
			t.Fatalf("reads not confined: %+v", rep)
		}
		for _, want := range []string{"own-file read-own", "refused-other-file", "refused-other-dir", "refused-home-file", "refused-home-dir",
			"read-etc-hosts", "ran-go", "ran-sh", "ran-git", "tmp-ok"} {
			if !strings.Contains(out, want) {
				t.Errorf("namespaces=%v: missing %q", ns, want)
			}
		}
		for _, bad := range []string{"other-session-secret", "home-secret"} {
			if strings.Contains(out, bad) {
				t.Errorf("namespaces=%v: read confinement let through %q", ns, bad)
			}
		}
		if !strings.Contains(out, "Permission denied") {
			t.Errorf("namespaces=%v: no permission denied in %q", ns, out)
		}
	}
}

func TestToolchainAndProgramReadable(t *testing.T) {
	home := "/home/u"
	hidden := []string{"/home/u/.local/share/foya"}
	got := ToolchainReadable("/usr/local/go/bin:/home/u/go/bin:/home/u/.local/bin:/home/u/bin:/work/bin:relative:/home/u/.cargo/bin", home, hidden)
	want := []string{"/usr/local/go/bin", "/home/u/go/bin", "/home/u/go", "/home/u/.local/bin", "/home/u/bin", "/work/bin", "/home/u/.cargo/bin", "/home/u/.cargo"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ToolchainReadable = %q, want %q", got, want)
	}
	dir := t.TempDir()
	entry := filepath.Join(dir, "proj", "node_modules", "@m", "srv", "dist", "index.js")
	venv := filepath.Join(dir, "venv", "bin", "python")
	for _, f := range []string{entry, venv} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got = ProgramReadable([]string{venv, entry, "stdio", "/does/not/exist"}, "/usr/bin", home, hidden)
	want = []string{filepath.Join(dir, "venv", "bin"), filepath.Join(dir, "venv"), filepath.Join(dir, "proj", "node_modules")}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ProgramReadable = %q, want %q", got, want)
	}
}
