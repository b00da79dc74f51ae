package cli

import (
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
)

// A live chunk is printed from where the output printed so far ends; a gap
// or a split character (replaced in the event's text) is left to
// terminalOutput.
func TestFollowerChunk(t *testing.T) {
	var out strings.Builder
	f := &follower{out: &out}
	for _, c := range []struct {
		offset int
		text   string
		used   bool
	}{
		{0, "ab", true},
		{0, "ab", true},       // seen
		{1, "bcd", true},      // overlaps: "cd"
		{6, "x", false},       // gap after 4
		{4, "e\uFFFD", false}, // split character
		{4, "ef", true},
	} {
		if got := f.chunk(c.offset, c.text); got != c.used {
			t.Errorf("chunk(%d, %q) = %v", c.offset, c.text, got)
		}
	}
	if out.String() != "abcdef" || f.next != 6 {
		t.Fatalf("printed %q, next %d", out.String(), f.next)
	}
}

func TestTerminalExitCode(t *testing.T) {
	code := func(c int) *int { return &c }
	for _, c := range []struct {
		tm   client.TerminalFields
		want int
	}{
		{client.TerminalFields{Status: client.TerminalStatusExited, ExitCode: code(0)}, 0},
		{client.TerminalFields{Status: client.TerminalStatusExited, ExitCode: code(3)}, 3},
		{client.TerminalFields{Status: client.TerminalStatusExited, ExitCode: code(-1)}, exitSignalled},
		{client.TerminalFields{Status: client.TerminalStatusKilled, ExitCode: code(-1)}, exitKilled},
	} {
		if got := terminalExitCode(c.tm); got != c.want {
			t.Errorf("terminalExitCode(%+v) = %d, want %d", c.tm, got, c.want)
		}
	}
}
