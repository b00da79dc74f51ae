package mcpname

import (
	"strings"
	"testing"
)

func TestExposed(t *testing.T) {
	for _, tc := range []struct{ server, tool, want string }{
		{"git hub", "list.issues", "mcp__git_hub__list_issues"},
		{"a", "b-c_d", "mcp__a__b-c_d"},
	} {
		if got := Exposed(tc.server, tc.tool); got != tc.want {
			t.Errorf("Exposed(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
		}
	}
	long1 := Exposed("s", strings.Repeat("x", 80)+"1")
	long2 := Exposed("s", strings.Repeat("x", 80)+"2")
	if len(long1) != Max || len(long2) != Max || long1 == long2 {
		t.Fatalf("long names: %q, %q: want %d bytes each and distinct", long1, long2, Max)
	}
}
