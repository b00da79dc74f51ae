package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/foya-dev/foya/internal/cmdutil"
	"github.com/foya-dev/foya/plugins/sandbox"
)

// TestMain lets the test binary stand in for the kernel binary, which the
// plugin host re-executes as `<exe> plugin NAME` (and the sandbox as
// `<exe> __sandbox …`).
func TestMain(m *testing.M) {
	sandbox.MaybeHelper()
	if len(os.Args) == 3 && os.Args[1] == "plugin" {
		os.Exit(cmdutil.Exit(RunPlugin(os.Args[2]), os.Stderr))
	}
	os.Exit(m.Run())
}

// syncBuffer is the log of a Main.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startMain runs a kernel in process on a fresh data directory.
func startMain(t *testing.T, ctx context.Context, dataDir string, args ...string) (*Main, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	m := NewMain("test", &bytes.Buffer{}, logs)
	if err := m.ParseFlags(append([]string{"--addr", "127.0.0.1:0", "--data-dir", dataDir}, args...)); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(ctx); err != nil {
		m.Close()
		t.Fatalf("run: %v\n%s", err, logs)
	}
	return m, logs
}

// The composition root serves the API with the token of the data
// directory and the built-in plugins (this test binary re-executed), stops
// when its context ends, and releases the data directory.
func TestMainRunsAndCloses(t *testing.T) {
	dataDir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	m, logs := startMain(t, ctx, dataDir)
	if !strings.Contains(logs.String(), "msg=listening") {
		t.Fatalf("no listening line:\n%s", logs)
	}
	tok, err := os.ReadFile(filepath.Join(dataDir, "auth-token"))
	if err != nil {
		t.Fatal(err)
	}
	query := func(token string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+m.Addr()+"/graphql", strings.NewReader(`{"query":"{ plugins { name builtin healthy } }"}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		return resp.StatusCode, buf.Bytes()
	}
	if code, _ := query(""); code != http.StatusUnauthorized {
		t.Fatalf("without the token: %d", code)
	}
	code, body := query(strings.TrimSpace(string(tok)))
	var out struct {
		Data struct {
			Plugins []struct {
				Name             string
				Builtin, Healthy bool
			}
		}
	}
	if err := json.Unmarshal(body, &out); code != http.StatusOK || err != nil {
		t.Fatalf("plugins: %d %s", code, body)
	}
	var names []string
	for _, p := range out.Data.Plugins {
		if !p.Builtin || !p.Healthy {
			t.Errorf("plugin %+v", p)
		}
		names = append(names, p.Name)
	}
	if got, want := strings.Join(names, ","), strings.Join(BuiltinPlugins(), ","); got != want {
		t.Errorf("plugins %s, want %s\n%s", got, want, logs)
	}

	cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if !strings.Contains(logs.String(), "shutting down") {
		t.Errorf("no shutting down line:\n%s", logs)
	}
	// The data directory is free again.
	m2, _ := startMain(t, t.Context(), dataDir)
	m2.Close()
}
