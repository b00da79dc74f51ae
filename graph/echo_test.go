package graph

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClipMessage(t *testing.T) {
	long := strings.Repeat("é", 300)
	for _, c := range []struct{ name, in string }{
		{"quoted value", `Cannot query field "` + long + `" on type "Query".`},
		{"escaped quotes", `unknown kind "a\"` + long + `" here`},
		{"unterminated quote", `Unexpected "` + long},
		{"unquoted echo", "json request body could not be decoded: invalid character 'x' body:" + long},
		{"plain long", long},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ClipMessage(c.in)
			if !utf8.ValidString(got) {
				t.Fatalf("invalid UTF-8: %q", got)
			}
			if n := strings.Count(got, "é") * 2; n > MaxEchoBytes {
				t.Fatalf("%d bytes of input echoed: %q", n, got)
			}
			if len(got) > MaxEchoBytes+len("…") {
				t.Fatalf("%d bytes: %q", len(got), got)
			}
		})
	}
	if got := ClipMessage(`Cannot query field "x" on type "Query".`); got != `Cannot query field "x" on type "Query".` {
		t.Fatalf("a short message changed: %q", got)
	}
	if got := ClipMessage("json request body could not be decoded: unexpected EOF body:{\"query\":"); strings.Contains(got, "query") {
		t.Fatalf("the body was echoed: %q", got)
	}
}
