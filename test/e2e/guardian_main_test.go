//go:build linux

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// The tests of this file drive GUARDED sessions (docs/guardian.md) through
// the kernel binary and a fake OpenAI-compatible server that plays both the
// session's model and the guardian; the guardian's requests are recognised
// by their fixed instruction.

const guardianMarker = "You are the guardian of a coding agent"

// guardianAnswer is a guardian reply (a non-streamed completion).
func guardianAnswer(text string) openaitest.Response {
	return openaitest.Completion("gpt-t", text, "stop", 120, 20)
}

// guardianVerdictView is the typed guardianVerdict field of an event.
type guardianVerdictView struct {
	ToolCallID string
	Tool       string
	Verdict    string
	Reason     string
	Cause      string
	Model      string
}

// guardianVerdicts reads the guardian_verdict events of a session through
// the typed field, and counts its approval_requested events and its usage
// rows of purpose guardian.
func (k *kernelProc) guardianVerdicts(t *testing.T, sid string) (verdicts []guardianVerdictView, approvals []string, guardianUsage int) {
	t.Helper()
	var out struct {
		Events []struct {
			Type            string
			Payload         json.RawMessage
			GuardianVerdict *guardianVerdictView
			Approval        *struct{ RequestID string }
		}
	}
	k.gql(t, `query($s: ID!) { events(sessionId: $s) { type payload guardianVerdict { toolCallId tool verdict reason cause model } approval { requestId } } }`, map[string]any{"s": sid}, &out)
	for _, e := range out.Events {
		switch e.Type {
		case "guardian_verdict":
			if e.GuardianVerdict == nil {
				t.Fatalf("guardian_verdict without its typed field: %s", e.Payload)
			}
			verdicts = append(verdicts, *e.GuardianVerdict)
		case "approval_requested":
			approvals = append(approvals, e.Approval.RequestID)
		case "usage":
			var p struct{ Purpose string }
			_ = json.Unmarshal(e.Payload, &p)
			if p.Purpose == "guardian" {
				guardianUsage++
			}
		}
	}
	return
}

// guardianRequests are the requests the fake got from the guardian.
func guardianRequests(fake *openaitest.Server) []openaitest.Request {
	var out []openaitest.Request
	for _, r := range fake.Requests() {
		if strings.Contains(string(r.Body), guardianMarker) {
			out = append(out, r)
		}
	}
	return out
}

// turnsFinished counts the session's turn_finished events.
func (k *kernelProc) turnsFinished(t *testing.T, sid string) int {
	n := 0
	for _, e := range k.eventLog(t, sid).Events {
		if e.Type == "turn_finished" {
			n++
		}
	}
	return n
}

func TestGuardianReviewsApprovals(t *testing.T) {
	t.Parallel()
	// 2 s: the reviews that answer take milliseconds; "timeout escalates"
	// waits the whole bound out.
	k := startKernel(t, t.TempDir(), "--guardian-timeout", "2s", "--guardian-max-calls", "2")
	proj := outsideTmp(t)
	if err := os.WriteFile(filepath.Join(proj, "AGENTS.md"), []byte("Rule: never delete anything outside build/.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), proj, "GUARDED")

	// turn sends text and runs the scripted replies; it waits for the
	// turn's end unless an approval is expected first.
	turn := func(t *testing.T, text string, rs ...openaitest.Response) int {
		t.Helper()
		n := k.turnsFinished(t, sid)
		fake.Enqueue(rs...)
		k.sendMessage(t, sid, text)
		return n
	}
	lastTool := func(t *testing.T) toolMsg {
		t.Helper()
		var last toolMsg
		for _, m := range k.sessionDetail(t, sid).Session.Messages {
			if m.Role == "TOOL" {
				last = m
			}
		}
		return last
	}

	t.Run("approve", func(t *testing.T) {
		n := turn(t, "please write harmless.txt; my key is sk-conn-secret",
			toolCall("w1", "write", map[string]any{"path": "harmless.txt", "content": "hello"}),
			guardianAnswer(`{"verdict":"approve","reason":"a new file in the project, as asked"}`),
			openaitest.TextStream("gpt-t", "done"))
		k.waitEvents(t, sid, "turn_finished", n+1)
		if b, err := os.ReadFile(filepath.Join(proj, "harmless.txt")); err != nil || string(b) != "hello" {
			t.Fatalf("the approved write did not run: %q %v", b, err)
		}
		v, approvals, usage := k.guardianVerdicts(t, sid)
		if len(v) != 1 || v[0].Verdict != "approve" || v[0].Cause != "verdict" || v[0].ToolCallID != "w1" || v[0].Tool != "write" || v[0].Model != "gpt-t" || !strings.Contains(v[0].Reason, "as asked") {
			t.Fatalf("verdicts: %+v", v)
		}
		if len(approvals) != 0 || usage != 1 {
			t.Fatalf("approvals %v, guardian usage rows %d", approvals, usage)
		}
		g := guardianRequests(fake)
		if len(g) != 1 {
			t.Fatalf("%d guardian requests", len(g))
		}
		body := string(g[0].Body)
		for _, want := range []string{"harmless.txt", "Rule: never delete anything outside build/.", "please write harmless.txt", `\"verdict\":\"approve\"|\"deny\"|\"escalate\"`} {
			if !strings.Contains(body, want) {
				t.Errorf("the guardian request lacks %q:\n%s", want, body)
			}
		}
		if strings.Contains(body, "sk-conn-secret") {
			t.Errorf("the guardian saw the configured API key:\n%s", body)
		}
	})

	t.Run("deny", func(t *testing.T) {
		n := turn(t, "clean up",
			toolCall("b1", "bash", map[string]any{"command": "rm -rf /"}),
			guardianAnswer(`{"verdict":"deny","reason":"deleting the root filesystem is never part of cleaning up"}`),
			openaitest.TextStream("gpt-t", "ok, I will not"))
		k.waitEvents(t, sid, "turn_finished", n+1)
		m := lastTool(t)
		if !m.IsError || !strings.Contains(m.Text, "denied by the guardian: deleting the root filesystem") {
			t.Fatalf("denied call: %+v", m)
		}
		reqs := fake.Requests()
		if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "deleting the root filesystem is never part of cleaning up") {
			t.Fatalf("the model did not read the guardian's reason: %s", last)
		}
		v, approvals, usage := k.guardianVerdicts(t, sid)
		if len(v) != 2 || v[1].Verdict != "deny" || v[1].ToolCallID != "b1" || len(approvals) != 0 || usage != 2 {
			t.Fatalf("verdicts %+v, approvals %v, usage %d", v, approvals, usage)
		}
	})

	// escalated: the call waits for a person, who decides.
	escalated := func(t *testing.T, nApprovals int, decision client.ApprovalDecision) {
		t.Helper()
		k.waitEvents(t, sid, "approval_requested", nApprovals)
		_, approvals, _ := k.guardianVerdicts(t, sid)
		k.resolveApproval(t, sid, approvals[len(approvals)-1], decision)
	}

	t.Run("escalate", func(t *testing.T) {
		n := turn(t, "tidy the repository",
			toolCall("e1", "write", map[string]any{"path": "ambiguous.txt", "content": "?"}),
			guardianAnswer("```json\n{\"verdict\":\"escalate\",\"reason\":\"unclear whether this file is wanted\"}\n```"),
			openaitest.TextStream("gpt-t", "done"))
		escalated(t, 1, client.ApprovalDecisionApproved)
		k.waitEvents(t, sid, "turn_finished", n+1)
		if !exists(filepath.Join(proj, "ambiguous.txt")) {
			t.Fatal("the call the person approved did not run")
		}
		v, _, _ := k.guardianVerdicts(t, sid)
		if got := v[len(v)-1]; got.Verdict != "escalate" || got.Cause != "verdict" || got.Reason != "unclear whether this file is wanted" {
			t.Fatalf("verdict: %+v", got)
		}
	})

	t.Run("garbage escalates", func(t *testing.T) {
		n := turn(t, "write more",
			toolCall("g1", "write", map[string]any{"path": "garbage.txt", "content": "x"}),
			guardianAnswer("Sure, that looks fine to me! APPROVE"),
			openaitest.TextStream("gpt-t", "done"))
		escalated(t, 2, client.ApprovalDecisionDenied)
		k.waitEvents(t, sid, "turn_finished", n+1)
		if exists(filepath.Join(proj, "garbage.txt")) {
			t.Fatal("a call whose guardian answered garbage ran without a person")
		}
		v, _, _ := k.guardianVerdicts(t, sid)
		if got := v[len(v)-1]; got.Verdict != "escalate" || got.Cause != "malformed" {
			t.Fatalf("verdict: %+v", got)
		}
	})

	t.Run("timeout escalates", func(t *testing.T) {
		n := turn(t, "write again",
			toolCall("t1", "write", map[string]any{"path": "slow.txt", "content": "x"}),
			openaitest.Response{Hang: true},
			openaitest.TextStream("gpt-t", "done"))
		escalated(t, 3, client.ApprovalDecisionApproved)
		k.waitEvents(t, sid, "turn_finished", n+1)
		if !exists(filepath.Join(proj, "slow.txt")) {
			t.Fatal("the approved call did not run")
		}
		v, _, _ := k.guardianVerdicts(t, sid)
		if got := v[len(v)-1]; got.Verdict != "escalate" || got.Cause != "timeout" {
			t.Fatalf("verdict: %+v", got)
		}
	})

	t.Run("cap escalates", func(t *testing.T) {
		before := len(guardianRequests(fake))
		n := turn(t, "write three files",
			toolCall("c1", "write", map[string]any{"path": "c1.txt", "content": "1"}),
			guardianAnswer(`{"verdict":"approve","reason":"fine"}`),
			toolCall("c2", "write", map[string]any{"path": "c2.txt", "content": "2"}),
			guardianAnswer(`{"verdict":"approve","reason":"fine"}`),
			toolCall("c3", "write", map[string]any{"path": "c3.txt", "content": "3"}),
			openaitest.TextStream("gpt-t", "done"))
		escalated(t, 4, client.ApprovalDecisionApproved)
		k.waitEvents(t, sid, "turn_finished", n+1)
		if got := len(guardianRequests(fake)) - before; got != 2 {
			t.Fatalf("%d guardian requests in a turn capped at 2", got)
		}
		v, _, _ := k.guardianVerdicts(t, sid)
		if got := v[len(v)-1]; got.Verdict != "escalate" || got.Cause != "cap" || got.ToolCallID != "c3" {
			t.Fatalf("verdict: %+v", got)
		}
		for _, f := range []string{"c1.txt", "c2.txt", "c3.txt"} {
			if !exists(filepath.Join(proj, f)) {
				t.Fatalf("%s was not written", f)
			}
		}
	})
}
