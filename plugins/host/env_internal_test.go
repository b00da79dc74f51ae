package host

import (
	"slices"
	"testing"
)

// The built-in plugins (bash among them) run with the kernel's PATH, so a
// toolchain installed in its own directory is found; a third-party plugin
// gets the fixed system PATH.
func TestBuiltinEnvKeepsTheKernelsPath(t *testing.T) {
	t.Setenv("PATH", "/opt/toolchain/bin:/usr/bin:/bin")
	t.Setenv("FOYA_SECRET_SHOULD_NOT_PASS", "x")
	if !slices.Contains(builtinEnv(), "PATH=/opt/toolchain/bin:/usr/bin:/bin") {
		t.Fatalf("builtinEnv() = %q, want the kernel's PATH", builtinEnv())
	}
	if !slices.Contains(minimalEnv(), "PATH=/usr/local/bin:/usr/bin:/bin") {
		t.Fatalf("minimalEnv() = %q, want the fixed PATH", minimalEnv())
	}
	for _, kv := range builtinEnv() {
		if kv == "FOYA_SECRET_SHOULD_NOT_PASS=x" {
			t.Fatal("builtinEnv passes an arbitrary variable")
		}
	}
}

// The kernel's runtime settings reach the built-in plugins (a
// memprofilerate for their profiles, memtrim.SampleHeap), not a
// third-party plugin.
func TestBuiltinEnvKeepsTheKernelsRuntimeSettings(t *testing.T) {
	t.Setenv("GODEBUG", "memprofilerate=0")
	t.Setenv("GOGC", "75")
	for _, kv := range []string{"GODEBUG=memprofilerate=0", "GOGC=75"} {
		if !slices.Contains(builtinEnv(), kv) {
			t.Errorf("builtinEnv() = %q, want %s", builtinEnv(), kv)
		}
		if slices.Contains(minimalEnv(), kv) {
			t.Errorf("minimalEnv() = %q passes %s", minimalEnv(), kv)
		}
	}
}
