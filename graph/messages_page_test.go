package graph_test

import (
	"strings"
	"testing"
)

// Session.messages refuses bad paging arguments with BAD_INPUT naming
// them (huge_main_test.go pages a real huge session).
func TestMessagesPagingArguments(t *testing.T) {
	k := newTestKernel(t)
	var s struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation { createSession(input: {title: "p"}) { id } }`, nil, &s)
	vars := map[string]any{"s": s.CreateSession.ID}
	for args, want := range map[string]string{
		"first: 1, last: 1":     "not both",
		"first: 0":              "first must be between 1 and 1000",
		"last: 1001":            "last must be between 1 and 1000",
		"afterSeq: -1":          "afterSeq must be 0 or more",
		"last: 5, beforeSeq: 0": "beforeSeq must be 1 or more",
	} {
		msg := k.mustFail(t, "BAD_INPUT", `query($s: ID!) { session(id: $s) { messages(`+args+`) { seq } } }`, vars)
		if !strings.Contains(msg, want) {
			t.Fatalf("messages(%s): %q lacks %q", args, msg, want)
		}
	}
	var out struct {
		Session struct{ Messages []struct{ Seq int } }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { messages(afterSeq: 5, beforeSeq: 6) { seq } } }`, vars, &out)
	if len(out.Session.Messages) != 0 {
		t.Fatalf("empty range: %+v", out)
	}
}
