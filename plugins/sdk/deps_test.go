package sdk_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportBoundaries keeps the arrows pointing inward: core is standard
// library only, and the SDK a third party imports never pulls in core.
func TestImportBoundaries(t *testing.T) {
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	for _, d := range deps("github.com/foya-dev/foya/core") {
		if d != "github.com/foya-dev/foya/core" && strings.Contains(strings.SplitN(d, "/", 2)[0], ".") {
			t.Errorf("core imports %s; it must stay standard library only", d)
		}
	}
	for _, d := range deps("github.com/foya-dev/foya/plugins/sdk") {
		if d == "github.com/foya-dev/foya/core" || strings.HasPrefix(d, "github.com/foya-dev/foya/plugins/host") {
			t.Errorf("sdk imports %s; plugin authors import only the sdk", d)
		}
	}
}
