package catalogfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
)

func TestMCPStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := NewMCP(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(ctx); err != nil || got != nil {
		t.Fatalf("empty store: %v %v", got, err)
	}
	one := []core.MCPServerConfig{{ID: "mcp_1", Name: "fs", Transport: core.MCPStdio, Command: "npx", Args: []string{"-y", "x"},
		Env: []core.KeyValue{{Key: "TOKEN", Value: "v1"}}, Enabled: true, TimeoutSeconds: 5}}
	if err := s.Save(ctx, one); err != nil {
		t.Fatal(err)
	}
	two := append(one, core.MCPServerConfig{ID: "mcp_2", Name: "web", Transport: core.MCPHTTP, URL: "https://h/mcp",
		Headers: []core.KeyValue{{Key: "Authorization", Value: "Bearer t"}}})
	if err := s.Save(ctx, two); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx)
	if err != nil || len(got) != 2 || got[0].Env[0].Value != "v1" || got[1].Headers[0].Value != "Bearer t" || got[0].TimeoutSeconds != 5 || got[1].Enabled {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for _, name := range []string{MCPFileName, MCPBackupName} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", name, info, err)
		}
	}
	// A crash before the rename leaves the old file (and a temp file that
	// Load removes).
	s.rename = func(string, string) error { return errors.New("crash") }
	if err := s.Save(ctx, one); err == nil {
		t.Fatal("save with a failing rename succeeded")
	}
	s.rename = os.Rename
	if got, _ := s.Load(ctx); len(got) != 2 {
		t.Fatalf("after a failed save: %+v", got)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(m) != 0 {
		t.Fatalf("temp files left: %v", m)
	}
	// A corrupt file is reported, never overwritten.
	if err := os.WriteFile(s.Path(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx); !errors.Is(err, core.ErrUnavailable) || !strings.Contains(err.Error(), "mcp.json") {
		t.Fatalf("corrupt load: %v", err)
	}
	if err := s.Save(ctx, one); err == nil {
		t.Fatal("overwrote a corrupt file")
	}
}
