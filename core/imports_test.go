package core_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreImportsOnlyStdlib keeps core free of dependencies (STYLE.md).
func TestCoreImportsOnlyStdlib(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if !strings.HasPrefix(pkg, "github.com/foya-dev/foya/core") {
			t.Errorf("core depends on %s; core is standard library only", pkg)
		}
	}
}
