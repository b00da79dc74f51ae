//go:build unix

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `foya web --open` hands the browser a private file, never the token: the
// opener's argv and environment hold no token, the file is 0600 in a 0700
// directory, forwards to the link, and is gone when the command returns.
func TestWebOpenKeepsTokenOffArgv(t *testing.T) {
	const token = "tok-web-open-5c2f9a"
	dir := t.TempDir()
	log := filepath.Join(dir, "opener.log")
	opener := filepath.Join(dir, "fake-browser")
	script := `#!/bin/sh
{
  echo "argv: $0 $*"
  echo "mode: $(stat -c %a "$1") dir: $(stat -c %a "$(dirname "$1")")"
  echo "env:"; env
  echo "file:"; cat "$1"
  echo "cmdline:"; tr '\0' ' ' < /proc/$$/cmdline
} > ` + log + ` 2>&1
`
	if err := os.WriteFile(opener, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	runtimeDir := filepath.Join(dir, "run")
	if err := os.Mkdir(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", opener)
	t.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	t.Setenv("FOYA_TOKEN", token)
	old := webLinkGrace
	webLinkGrace = 0
	t.Cleanup(func() { webLinkGrace = old })

	var stdout, stderr bytes.Buffer
	if err := webCmd([]string{"--open", "--addr", "127.0.0.1:4777"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "#token="+token) {
		t.Errorf("stdout %q", stdout.String())
	}
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got, _ = os.ReadFile(log); bytes.Contains(got, []byte("cmdline:")) {
			break
		}
	}
	out := string(got)
	t.Logf("opener saw:\n%s", out)
	argv, rest, _ := strings.Cut(out, "\n")
	envPart, filePart, _ := strings.Cut(rest, "file:")
	filePart, cmdline, _ := strings.Cut(filePart, "cmdline:")
	if strings.Contains(argv, token) || strings.Contains(cmdline, token) || !strings.Contains(argv, "foya-web.html") {
		t.Errorf("opener argv %q / %q", argv, cmdline)
	}
	if strings.Contains(envPart, token) {
		t.Errorf("the token is in the opener's environment")
	}
	if !strings.Contains(envPart, "mode: 600 dir: 700") {
		t.Errorf("file modes: %q", strings.SplitN(envPart, "\n", 2)[0])
	}
	if !strings.Contains(filePart, `http-equiv="refresh" content="0;url=http://127.0.0.1:4777/#token=`+token) ||
		!strings.Contains(filePart, `location.replace("http://127.0.0.1:4777/#token=`+token+`")`) {
		t.Errorf("the file does not forward to the link:\n%s", filePart)
	}
	left, _ := os.ReadDir(runtimeDir)
	if len(left) != 0 {
		t.Errorf("the link file was not removed: %v", left)
	}
}
