package graph_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

func (k *testKernel) agentMode(t *testing.T, sid string) string {
	t.Helper()
	var s struct{ Session struct{ AgentMode string } }
	k.mustDo(t, `query($s: ID!) { session(id: $s) { agentMode } }`, map[string]any{"s": sid}, &s)
	return s.Session.AgentMode
}

// PLAN → (plan turn completes) AWAITING_CONFIRMATION → confirmPlan → EXECUTE
// with the execution turn; writes are refused until then.
func TestPlanConfirmationFlow(t *testing.T) {
	k := newTestKernel(t)
	dir := t.TempDir()
	sid := projectSession(t, k, dir)
	w := k.watch(t, sid)
	k.mustFail(t, "CONFLICT", `mutation($s: ID!) { confirmPlan(sessionId: $s) { turnStarted } }`, map[string]any{"s": sid})
	k.mustFail(t, "BAD_INPUT", `mutation($s: ID!) { updateSession(id: $s, input: {agentMode: AWAITING_CONFIRMATION}) { id } }`, map[string]any{"s": sid})
	k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {agentMode: PLAN}) { id } }`, map[string]any{"s": sid}, nil)

	write := func(id string) openaitest.Response {
		return openaitest.Response{Events: []string{chunk(toolCallDelta(0, id, "write", `{"path":"out.txt","content":"done\n"}`), ""), chunk(map[string]any{}, "tool_calls")}}
	}
	// The planning turn tries to write (refused), then answers with the plan.
	k.fake.Enqueue(write("c_w1"), openaitest.TextStream(testModel, "Plan: 1. write out.txt"))
	k.send(t, sid, "make out.txt")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("plan turn %+v", p)
	}
	if m := k.agentMode(t, sid); m != "AWAITING_CONFIRMATION" {
		t.Fatalf("after the plan: %s", m)
	}
	msgs := k.messages(t, sid)
	if !msgs[2].IsError || !strings.Contains(msgs[2].Text, "PLAN") {
		t.Fatalf("write in PLAN: %+v", msgs[2])
	}
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
		t.Fatal("a write ran in PLAN")
	}
	// A revision while awaiting: still read-only, still awaiting.
	k.fake.Enqueue(write("c_w2"), openaitest.TextStream(testModel, "Plan v2: 1. write out.txt with done"))
	k.send(t, sid, "say what goes in it")
	w.turnEnd()
	msgs = k.messages(t, sid)
	if n := len(msgs); !msgs[n-2].IsError || !strings.Contains(msgs[n-2].Text, "AWAITING_CONFIRMATION") || k.agentMode(t, sid) != "AWAITING_CONFIRMATION" {
		t.Fatalf("revision: %+v mode %s", msgs[n-2], k.agentMode(t, sid))
	}
	if !strings.Contains(string(k.fake.Requests()[2].Body), "awaits the user's confirmation") {
		t.Fatal("the revision request does not say the plan awaits confirmation")
	}
	// Confirm with an edit: EXECUTE, and the execution turn writes.
	k.fake.Enqueue(write("c_w3"), openaitest.TextStream(testModel, "Done."))
	var c struct{ ConfirmPlan struct{ TurnStarted bool } }
	k.mustDo(t, `mutation($s: ID!) { confirmPlan(sessionId: $s, edits: "also keep it short") { turnStarted } }`, map[string]any{"s": sid}, &c)
	if !c.ConfirmPlan.TurnStarted {
		t.Fatal("confirmPlan started no turn")
	}
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("execution turn %+v", p)
	}
	if m := k.agentMode(t, sid); m != "EXECUTE" {
		t.Fatalf("after confirm: %s", m)
	}
	if got := readFile(t, filepath.Join(dir, "out.txt")); got != "done\n" {
		t.Fatalf("out.txt %q", got)
	}
	// The execution request carries the plan (history) and the confirmation with the edit.
	rm := k.requestMessages(t, 4)
	last := rm[len(rm)-1]
	body := string(k.fake.Requests()[4].Body)
	if last["role"] != "user" || !strings.Contains(last["content"].(string), "confirmed") || !strings.Contains(last["content"].(string), "also keep it short") ||
		!strings.Contains(body, "Plan v2: 1. write out.txt with done") || strings.Contains(body, "PLAN mode") {
		t.Fatalf("execution request %+v", last)
	}
	k.mustFail(t, "CONFLICT", `mutation($s: ID!) { confirmPlan(sessionId: $s) { turnStarted } }`, map[string]any{"s": sid})
}
