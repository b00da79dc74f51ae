package e2e

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// --pprof serves Go profiles on loopback only, behind the Host/Origin guard
// and the token of /graphql: a rebinding page (Host: evil.test) gets 403, a
// request without the token 401, the token opens it. With
// --insecure-no-token the token is not asked, the Host guard still holds.
func TestServePprof(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(foyaBin, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--pprof", "0.0.0.0:6060").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "loopback only") {
		t.Fatalf("--pprof on all interfaces: exit %d, %s", code, out)
	}

	get := func(url, token string, hdr ...string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			if hdr[i] == "Host" {
				req.Host = hdr[i+1]
			} else {
				req.Header.Set(hdr[i], hdr[i+1])
			}
		}
		resp, err := (&http.Client{}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	// The default: the token of the data directory.
	addr := freeAddr(t)
	k := startKernel(t, t.TempDir(), "--pprof", addr)
	if code, _ := get("http://"+addr+"/debug/pprof/", ""); code != http.StatusUnauthorized {
		t.Fatalf("pprof without the token: %d", code)
	}
	if code, body := get("http://"+addr+"/debug/pprof/cmdline", k.token, "Host", "evil.test"); code != http.StatusForbidden || strings.Contains(body, "--data-dir") {
		t.Fatalf("pprof with Host: evil.test: %d %.200s", code, body)
	}
	if code, body := get("http://"+addr+"/debug/pprof/cmdline", "", "Host", "evil.test:6060"); code != http.StatusForbidden || strings.Contains(body, "--data-dir") {
		t.Fatalf("pprof with Host: evil.test and no token: %d %.200s", code, body)
	}
	if code, _ := get("http://"+addr+"/debug/pprof/", k.token, "Origin", "https://evil.test"); code != http.StatusForbidden {
		t.Fatalf("pprof from a foreign page: %d", code)
	}
	if code, body := get("http://"+addr+"/debug/pprof/goroutine?debug=1", k.token); code != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Fatalf("goroutine profile with the token: %d %.200s", code, body)
	}
	if code, _ := get("http://"+addr+"/debug/pprof/", k.token, "Host", "localhost:6060"); code != http.StatusOK {
		t.Fatalf("pprof with Host: localhost: %d", code)
	}

	// A token file of its own.
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

	// --insecure-no-token: no token asked, the Host guard holds.
	addr = freeAddr(t)
	startKernel(t, t.TempDir(), "--insecure-no-token", "--pprof", addr)
	if code, body := get("http://"+addr+"/debug/pprof/goroutine?debug=1", ""); code != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Fatalf("goroutine profile without a token on an --insecure-no-token kernel: %d %.200s", code, body)
	}
	if code, _ := get("http://"+addr+"/debug/pprof/cmdline", "", "Host", "evil.test"); code != http.StatusForbidden {
		t.Fatalf("pprof with Host: evil.test on an --insecure-no-token kernel: %d", code)
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
