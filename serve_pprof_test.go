package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// --pprof serves Go profiles on loopback only, behind the token when the
// kernel requires one.
func TestServePprof(t *testing.T) {
	out, err := exec.Command(foyaBin, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--pprof", "0.0.0.0:6060").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "loopback only") {
		t.Fatalf("--pprof on all interfaces: exit %d, %s", code, out)
	}

	get := func(url, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	addr := freeAddr(t)
	startKernel(t, t.TempDir(), "--pprof", addr)
	if code, body := get("http://"+addr+"/debug/pprof/goroutine?debug=1", ""); code != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Fatalf("goroutine profile: %d %.200s", code, body)
	}

	addr = freeAddr(t)
	tokFile := filepath.Join(t.TempDir(), "token")
	startKernel(t, t.TempDir(), "--require-token", "--auth-token-file", tokFile, "--pprof", addr)
	if code, _ := get("http://"+addr+"/debug/pprof/", ""); code != http.StatusUnauthorized {
		t.Fatalf("pprof without the token: %d", code)
	}
	raw, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := get("http://"+addr+"/debug/pprof/", strings.TrimSpace(string(raw))); code != http.StatusOK {
		t.Fatalf("pprof with the token: %d", code)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
