package graph_test

import (
	"encoding/json"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// SES-8: a model change made while a turn waits on an approval applies to
// the turn's next model request, not to the request already made.
func TestSettingsApplyAtTheNextStep(t *testing.T) {
	k := newTestKernel(t)
	conn := k.createConn(t, map[string]any{"name": "two", "baseUrl": k.fake.BaseURL(), "models": []any{map[string]any{"id": testModel}, map[string]any{"id": "gpt-u"}}}).ID
	var s struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation($c: ID) { createSession(input: {connectionId: $c, model: "gpt-t", title: "t", approvalMode: ASK}) { id } }`, map[string]any{"c": conn}, &s)
	sid := s.CreateSession.ID
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_write", "write", `{"path":"note.txt","content":"x\n"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream("gpt-u", "done"))
	k.send(t, sid, "write a note")
	var req core.ApprovalPayload
	if err := w.next(core.EventApprovalRequested).Decode(&req); err != nil {
		t.Fatal(err)
	}
	k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {model: "gpt-u"}) { model } }`, map[string]any{"s": sid}, nil)
	k.mustDo(t, `mutation($s: ID!, $r: ID!) { resolveApproval(sessionId: $s, requestId: $r, decision: APPROVED) }`, map[string]any{"s": sid, "r": req.RequestID}, nil)
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	reqs := k.fake.Requests()
	var b0, b1 struct{ Model string }
	_ = json.Unmarshal(reqs[0].Body, &b0)
	_ = json.Unmarshal(reqs[1].Body, &b1)
	if len(reqs) != 2 || b0.Model != testModel || b1.Model != "gpt-u" {
		t.Fatalf("%d requests on %q then %q", len(reqs), b0.Model, b1.Model)
	}
}
