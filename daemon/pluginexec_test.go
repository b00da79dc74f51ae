package daemon

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// builtinExec takes a plugin's own executable beside the kernel's only when
// it is an executable file of the same build: not a script, not a Go
// program of another module, and not when FOYA_PLUGIN_REEXEC=1.
func TestBuiltinExecSameBuildOnly(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "foya")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := builtinExec(exe, "openai"); got != "" {
		t.Fatalf("no plugin executable: %q", got)
	}
	// A script of the right name is not a Go executable of this build.
	script := filepath.Join(dir, PluginExecPrefix+"openai")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := builtinExec(exe, "openai"); got != "" {
		t.Fatalf("script taken: %q", got)
	}
	// A Go program of another module.
	mod := t.TempDir()
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/other\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(script); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", script, ".")
	build.Dir = mod
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	if got := builtinExec(exe, "openai"); got != "" {
		t.Fatalf("another module's program taken: %q", got)
	}
	// This test binary is of this module's build: as its own plugin
	// executable beside itself, it is taken, unless FOYA_PLUGIN_REEXEC=1.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	if !sameBuild(script) {
		t.Skip("the test binary carries no build information to compare")
	}
	if got := builtinExec(exe, "openai"); got != script {
		t.Fatalf("same build not taken: %q", got)
	}
	t.Setenv(ReexecEnv, "1")
	if got := builtinExec(exe, "openai"); got != "" {
		t.Fatalf("%s=1: %q", ReexecEnv, got)
	}
}
