package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// The npm reference server's trigger-sampling-request tool (offered only
// to a client that declares sampling): its sampling/createMessage is
// answered by the session's own model (a non-streamed completion with the
// server's system prompt, message and token limit), counted in the
// session's usage. Without approvals (BYPASS) nobody is asked; in ASK
// the person is asked after the call is approved, and a refusal reaches
// the server as an error.
func TestMCPEverythingSampling(t *testing.T) {
	t.Parallel()
	node, entry := everythingServer(t)
	k := newMCPKernel(t)
	srv := k.createMCP(t, map[string]any{"name": "everything", "transport": "STDIO", "command": node, "args": []string{entry, "stdio"}})
	k.waitStatus(t, srv.ID, "READY")
	if ok, _ := k.mcpServer(t, srv.ID).tool("trigger-sampling-request"); !ok {
		t.Fatal("server-everything did not offer trigger-sampling-request: the sampling capability was not sent")
	}
	const tool = "mcp__everything__trigger-sampling-request"

	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	before := len(k.fake.Requests())
	k.fake.Enqueue(callStream("c1", tool, `{"prompt":"say hi","maxTokens":50}`), openaitest.Completion("gpt-t", "Hi from the session's model", "stop", 21, 6), openaitest_TextStream("ok"))
	k.send(t, sid, "sample")
	w.turnEnd()
	m := lastToolMessage(t, k.messages(t, sid))
	if m.IsError || !strings.Contains(m.Text, "Hi from the session's model") || !strings.Contains(m.Text, `"stopReason": "endTurn"`) || !strings.Contains(m.Text, `"role": "assistant"`) {
		t.Fatalf("sampled: %+v", m)
	}
	reqs := k.fake.Requests()[before:]
	var sampling map[string]any
	for _, r := range reqs {
		if strings.Contains(string(r.Body), "helpful test server") {
			sampling = r.JSON()
		}
	}
	if sampling == nil || sampling["stream"] == true || !strings.Contains(mustJSON(t, sampling["messages"]), "say hi") || sampling["max_tokens"] != float64(50) {
		t.Fatalf("sampling request %v", sampling)
	}
	var usage struct {
		Session struct {
			Usage struct{ InputTokens, OutputTokens int64 }
		}
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { usage { inputTokens outputTokens } } }`, map[string]any{"s": sid}, &usage)
	if usage.Session.Usage.InputTokens < 21 || usage.Session.Usage.OutputTokens < 6 {
		t.Fatalf("the sampling's usage was not counted: %+v", usage.Session.Usage)
	}

	// ASK: the call is approved, then the person is asked about the
	// sampling; declining reaches the server as an error.
	sid = k.chatSession(t, nil, "ASK")
	w = k.watch(t, sid)
	k.fake.Enqueue(callStream("c2", tool, `{"prompt":"secret plan","maxTokens":20}`), openaitest_TextStream("ok"))
	k.send(t, sid, "sample")
	var req core.ApprovalPayload
	if err := w.next(core.EventApprovalRequested).Decode(&req); err != nil {
		t.Fatal(err)
	}
	k.mustDo(t, `mutation($s: ID!, $r: ID!) { resolveApproval(sessionId: $s, requestId: $r, decision: APPROVED) }`, map[string]any{"s": sid, "r": req.RequestID}, nil)
	var q core.QuestionPayload
	if err := w.next(core.EventQuestionRequested).Decode(&q); err != nil {
		t.Fatal(err)
	}
	if q.Elicitation == nil || q.Elicitation.Server != "everything" || !strings.Contains(q.Question, "asks to sample") || !strings.Contains(q.Question, "secret plan") || !strings.Contains(q.Question, "at most 20 tokens") {
		t.Fatalf("question %+v", q)
	}
	k.mustDo(t, answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": "", "x": "DECLINE"}, nil)
	w.turnEnd()
	if m := lastToolMessage(t, k.messages(t, sid)); !m.IsError || !strings.Contains(m.Text, "did not allow the sampling request") {
		t.Fatalf("declined: %+v", m)
	}

	// Accepted (a confirmation takes any answer): the model answers.
	k.fake.Enqueue(callStream("c3", tool, `{"prompt":"go ahead","maxTokens":20}`), openaitest.Completion("gpt-t", "Allowed answer", "length", 9, 20), openaitest_TextStream("ok"))
	k.send(t, sid, "sample")
	if err := w.next(core.EventApprovalRequested).Decode(&req); err != nil {
		t.Fatal(err)
	}
	k.mustDo(t, `mutation($s: ID!, $r: ID!) { resolveApproval(sessionId: $s, requestId: $r, decision: APPROVED) }`, map[string]any{"s": sid, "r": req.RequestID}, nil)
	if err := w.next(core.EventQuestionRequested).Decode(&q); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(q.Question, "Accept (any answer) or decline.") {
		t.Fatalf("question %q", q.Question)
	}
	k.mustDo(t, answerMutation, map[string]any{"s": sid, "r": q.RequestID, "a": "yes"}, nil)
	w.turnEnd()
	if m := lastToolMessage(t, k.messages(t, sid)); m.IsError || !strings.Contains(m.Text, "Allowed answer") || !strings.Contains(m.Text, `"stopReason": "maxTokens"`) {
		t.Fatalf("accepted: %+v", m)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
