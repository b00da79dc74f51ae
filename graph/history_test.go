package graph_test

import (
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// toolTurn scripts one turn: two tool calls, then a final answer.
func toolTurn(final string) []openaitest.Response {
	return []openaitest.Response{{Events: []string{
		chunk(toolCallDelta(0, "call_"+final+"_a", "lookup", `{"q":"a"}`), ""),
		chunk(toolCallDelta(1, "call_"+final+"_b", "lookup", `{"q":"b"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, final)}
}

func TestForkSession(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {reasoningEffort: "high"}) { id } }`, map[string]any{"s": sid}, nil)
	w := k.watch(t, sid)
	k.fake.Enqueue(toolTurn("one")...)
	k.send(t, sid, "first")
	w.turnEnd()
	k.fake.Enqueue(openaitest.TextStream(testModel, "two"))
	k.send(t, sid, "second")
	w.turnEnd()
	msgs := k.messages(t, sid)
	// user, assistant(calls), tool a, tool b, assistant "one", user, assistant "two"
	if len(msgs) != 7 {
		t.Fatalf("messages %+v", msgs)
	}
	const fork = `mutation($s: ID!, $a: Int!) { forkSession(sessionId: $s, afterSeq: $a) { id title connectionId model reasoningEffort approvalMode phase headSeq queue { id } } }`
	for name, m := range map[string]msgJSON{"user message": msgs[0], "unanswered tool calls": msgs[1], "half of the results": msgs[2]} {
		t.Run(name, func(t *testing.T) {
			msg := k.mustFail(t, "BAD_INPUT", fork, map[string]any{"s": sid, "a": m.Seq})
			if !strings.Contains(msg, "nearest valid") {
				t.Fatalf("message %q", msg)
			}
		})
	}
	k.mustFail(t, "NOT_FOUND", fork, map[string]any{"s": "ses_nope", "a": 1})

	// Fork after the tool result that completes the calls, while a turn runs.
	k.fake.Enqueue(hanging())
	k.send(t, sid, "third")
	w.next(core.EventMessageDelta)
	var out struct {
		ForkSession struct {
			ID, Title, ConnectionID, Model, ReasoningEffort, ApprovalMode, Phase string
			HeadSeq                                                              int64
			Queue                                                                []struct{ ID string }
		}
	}
	k.mustDo(t, fork, map[string]any{"s": sid, "a": msgs[3].Seq}, &out)
	f := out.ForkSession
	if f.ID == sid || f.Model != testModel || f.ReasoningEffort != "high" || f.ApprovalMode != "BYPASS" || f.Phase != "IDLE" || len(f.Queue) != 0 || f.Title != "test (branch)" {
		t.Fatalf("fork %+v", f)
	}
	copied := k.messages(t, f.ID)
	if len(copied) != 4 {
		t.Fatalf("copied %d messages, want 4", len(copied))
	}
	for i, m := range copied {
		src := msgs[i]
		if m.Role != src.Role || m.Text != src.Text || len(m.ToolCalls) != len(src.ToolCalls) || deref(m.ToolCallID) != deref(src.ToolCallID) {
			t.Fatalf("message %d differs: %+v vs %+v", i, m, src)
		}
		if m.Seq != int64(i+2) {
			t.Fatalf("copied message %d has seq %d: the fork has its own numbering", i, m.Seq)
		}
	}
	var evs struct{ Events []struct{ Type string } }
	k.mustDo(t, `query($s: ID!) { events(sessionId: $s) { type } }`, map[string]any{"s": f.ID}, &evs)
	if len(evs.Events) != 5 || evs.Events[0].Type != "session_created" || evs.Events[1].Type != "message_imported" {
		t.Fatalf("fork events %+v", evs.Events)
	}
	// The fork after the final answer of the first turn is valid too, and the
	// fork runs turns of its own.
	k.mustDo(t, fork, map[string]any{"s": sid, "a": msgs[4].Seq}, &out)
	fw := k.watch(t, out.ForkSession.ID)
	k.fake.Enqueue(openaitest.TextStream(testModel, "forked reply"))
	k.send(t, out.ForkSession.ID, "in the branch")
	if p := fw.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("fork turn %+v", p)
	}
	k.mustDo(t, `mutation($s: ID!) { stopTurn(sessionId: $s) { id } }`, map[string]any{"s": sid}, nil)
}

// Deleting sessions removes artifacts nothing refers to any more; a fork
// shares them, so deleting one side keeps the other's.
func TestDeleteRemovesUnreferencedArtifacts(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, map[string]any{"imageInput": true}, "BYPASS")
	w := k.watch(t, sid)
	img := pngBytes(t)
	att := k.upload(t, "dot.png", img)
	k.fake.Enqueue(openaitest.TextStream(testModel, "A dot."))
	k.mustDo(t, `mutation($s: ID!, $a: [ID!]) { sendMessage(sessionId: $s, input: {text: "see", attachmentIds: $a}) { turnStarted } }`, map[string]any{"s": sid, "a": []string{att}}, nil)
	w.turnEnd()
	msgs := k.messages(t, sid)
	var fork struct{ ForkSession struct{ ID string } }
	k.mustDo(t, `mutation($s: ID!, $a: Int!) { forkSession(sessionId: $s, afterSeq: $a) { id } }`, map[string]any{"s": sid, "a": msgs[1].Seq}, &fork)
	hash := sha(string(img))
	if !k.blobs.Has(hash) {
		t.Fatal("the upload is not in the artifact store")
	}
	k.mustDo(t, `mutation($s: ID!) { deleteSession(id: $s) }`, map[string]any{"s": sid}, nil)
	if !k.blobs.Has(hash) {
		t.Fatal("deleting the source removed an artifact the fork still uses")
	}
	if _, err := k.db.Attachment(t.Context(), att); err != nil {
		t.Fatalf("attachment record of the fork: %v", err)
	}
	k.mustDo(t, `mutation($s: ID!) { deleteSession(id: $s) }`, map[string]any{"s": fork.ForkSession.ID}, nil)
	if k.blobs.Has(hash) {
		t.Fatal("an unreferenced artifact survived")
	}
	if _, err := k.db.Attachment(t.Context(), att); err == nil {
		t.Fatal("an unreferenced attachment record survived")
	}
}
