package cmdutil

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Neutralize makes text from a model, a tool or a kernel safe to print on a
// terminal: control characters that could move the cursor, rewrite the
// screen or the title, or hide text become visible instead of acting. C0
// controls and DEL print in caret notation (ESC as ^[), C1 controls and
// bidirectional overrides as <U+XXXX>; newline and tab are kept, a carriage
// return is dropped. --json output is never neutralized.
func Neutralize(s string) string {
	clean := true
	for _, r := range s {
		if needsNeutral(r) {
			clean = false
			break
		}
	}
	if clean && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r == '\r':
		case r == utf8.RuneError:
			b.WriteRune(utf8.RuneError)
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f:
			b.WriteByte('^')
			b.WriteByte(byte(r) ^ 0x40)
		case needsNeutral(r) && r != '\n' && r != '\t':
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsNeutral(r rune) bool {
	switch {
	case r < 0x20 && r != '\n' && r != '\t', r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
