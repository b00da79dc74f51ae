package lines

import (
	"strings"
	"testing"
)

func TestWriter(t *testing.T) {
	var got []string
	w := NewWriter(func(l []byte) { got = append(got, string(l)) })
	for _, p := range []string{"a\nb", "c\n\nd\n", "tail"} {
		if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if want := []string{"a", "bc", "", "d"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("lines %q, want %q", got, want)
	}
	got = nil
	_, _ = w.Write([]byte(strings.Repeat("x", MaxLine)))
	if len(got) != 1 || len(got[0]) != MaxLine+len("tail") {
		t.Fatalf("runaway line: %d pieces", len(got))
	}
}
