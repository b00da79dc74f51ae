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

// sessions(first:, after:) pages the session list, newest first, each
// session exactly once; the default lists them all.
func TestSessionsPaging(t *testing.T) {
	k := newTestKernel(t)
	for range 7 {
		k.mustDo(t, `mutation { createSession(input: {title: "p"}) { id } }`, nil, nil)
	}
	var all struct{ Sessions []struct{ ID string } }
	k.mustDo(t, `{ sessions { id } }`, nil, &all)
	if len(all.Sessions) != 7 {
		t.Fatalf("%d sessions", len(all.Sessions))
	}
	var got []string
	var after any
	for {
		var page struct{ Sessions []struct{ ID string } }
		k.mustDo(t, `query($a: ID) { sessions(first: 3, after: $a) { id } }`, map[string]any{"a": after}, &page)
		if len(page.Sessions) == 0 {
			break
		}
		for _, s := range page.Sessions {
			got = append(got, s.ID)
		}
		after = page.Sessions[len(page.Sessions)-1].ID
	}
	for i, s := range all.Sessions {
		if i >= len(got) || got[i] != s.ID {
			t.Fatalf("paged %v, whole %v", got, all.Sessions)
		}
	}
	if len(got) != 7 {
		t.Fatalf("paged %d sessions", len(got))
	}
	k.mustFail(t, "BAD_INPUT", `{ sessions(first: 0) { id } }`, nil)
	k.mustFail(t, "NOT_FOUND", `{ sessions(first: 2, after: "ses_gone") { id } }`, nil)
}
