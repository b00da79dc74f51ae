package acp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestParseUnifiedDiff(t *testing.T) {
	d := "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n" +
		"--- a/dir/old.go\n+++ b/dir/old.go\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -10,2 +10,2 @@\n x\n-y\n+Y\n\\ No newline at end of file\n" +
		"--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
	got := parseUnifiedDiff(d)
	want := []fileDiff{
		{path: "new.txt", oldText: "", newText: "one\ntwo\n", created: true},
		{path: "dir/old.go", oldText: "a\nb\nc\nx\ny\n", newText: "a\nB\nc\nx\nY\n"},
		{path: "gone.txt", oldText: "bye\n", newText: ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("file %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := parseUnifiedDiff("--- a/big.bin\n+++ b/big.bin\n(too large to show)\n"); len(got) != 0 {
		t.Fatalf("a diff without hunks gave %+v", got)
	}
}

func TestModesAndKinds(t *testing.T) {
	for _, c := range []struct{ approval, agent, want string }{
		{"ASK", "EXECUTE", "ask"}, {"bypass", "execute", "bypass"}, {"EXPLORE", "PLAN", "plan"},
		{"ASK", "AWAITING_CONFIRMATION", "plan"}, {"", "", "ask"},
	} {
		if got := modeOf(c.approval, c.agent); got != c.want {
			t.Errorf("modeOf(%s, %s) = %s, want %s", c.approval, c.agent, got, c.want)
		}
	}
	for tool, kind := range map[string]string{"read": "read", "write": "edit", "edit": "edit", "bash": "execute",
		"grep": "search", "glob": "search", "web_search": "fetch", "tasks": "think", "mcp__x__y": "other"} {
		if got := toolKind(tool); got != kind {
			t.Errorf("toolKind(%s) = %s, want %s", tool, got, kind)
		}
	}
}

// A request whose params do not fit its method is invalid params (-32602),
// answered before the kernel is asked anything.
func TestBadParamsAreInvalidParams(t *testing.T) {
	a := &Agent{log: slog.New(slog.DiscardHandler), sessions: map[string]*session{}}
	for method, params := range map[string]string{
		"initialize":       `{"protocolVersion":"one"}`,
		"session/new":      `{"cwd":7}`,
		"session/load":     `{"sessionId":1,"cwd":"/w"}`,
		"session/resume":   `[]`,
		"session/list":     `{"cwd":false}`,
		"session/prompt":   `{"sessionId":"s","prompt":"hello"}`,
		"session/cancel":   `"s"`,
		"session/set_mode": `{"modeId":{}}`,
		"session/close":    `{"sessionId":[]}`,
		"session/delete":   `{"sessionId":null,"x":`,
	} {
		_, err := a.handle(context.Background(), method, json.RawMessage(params))
		var re *rpcError
		if !errors.As(err, &re) || re.Code != codeInvalidParams {
			t.Errorf("%s %s: %v, want invalid params", method, params, err)
		}
	}
	s := &session{a: a}
	for i, raw := range []string{`{"type":"text","text":1}`, `{"type":"resource"}`, `{"type":"image","data":"%%"}`, `{"type":"audio"}`, `{"type":"video"}`} {
		_, _, err := s.input(context.Background(), []json.RawMessage{json.RawMessage(raw)})
		var re *rpcError
		if !errors.As(err, &re) || re.Code != codeInvalidParams || !strings.Contains(re.Message, "prompt[0]") {
			t.Errorf("block %d %s: %v, want invalid params naming prompt[0]", i, raw, err)
		}
	}
}
