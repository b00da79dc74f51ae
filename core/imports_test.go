package core_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreImportsOnlyStdlib keeps core and every package under it free of
// dependencies (STYLE.md): each imports only the standard library, core and
// packages under core.
func TestCoreImportsOnlyStdlib(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	pkgs, err := exec.Command(goBin, "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if len(strings.Fields(string(pkgs))) < 8 {
		t.Fatalf("go list ./... found only %q under core", pkgs)
	}
	for _, p := range strings.Fields(string(pkgs)) {
		out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", p).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep != "github.com/foya-dev/foya/core" && !strings.HasPrefix(dep, "github.com/foya-dev/foya/core/") {
				t.Errorf("%s depends on %s; core and its packages are standard library only", p, dep)
			}
		}
	}
}
