package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/foya-dev/foya/plugins/sdk"
)

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// run calls tool name with input in scope and fails on a Go error.
func run(t *testing.T, s *Set, scope, name string, input any) sdk.ToolResult {
	t.Helper()
	res, err := s.Call(ctxT(t), req(t, scope, name, input))
	if err != nil {
		t.Fatalf("%s: Go error %v", name, err)
	}
	return res
}

func req(t *testing.T, scope, name string, input any) sdk.ToolCallRequest {
	t.Helper()
	b, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	return sdk.ToolCallRequest{SessionID: "ses_t", ToolCallID: "call_t", Name: name, Input: b, ScopeDir: scope}
}

// files writes name → content under dir.
func files(t *testing.T, dir string, m map[string]string) {
	t.Helper()
	for name, content := range m {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// realTemp is a temp dir with symlinks resolved, so paths compare equal.
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
