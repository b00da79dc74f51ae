package testenv

import (
	"strings"
	"testing"
)

func TestOptionalSkipsOrFails(t *testing.T) {
	t.Setenv("CI", "")
	t.Run("missing tool", func(t *testing.T) {
		Optional(t, "frobnicator is not installed")
	})
	if s := Summary(); !strings.Contains(s, "SKIP TestOptionalSkipsOrFails/missing_tool: frobnicator is not installed") {
		t.Fatalf("summary %q", s)
	}
	if !CI() {
		t.Setenv("CI", "true")
	}
	if !CI() {
		t.Fatal("CI=true not seen")
	}
}
