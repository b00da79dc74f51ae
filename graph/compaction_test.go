package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// reply streams text and reports prompt tokens as a real endpoint would.
func reply(text string, promptTokens int64) openaitest.Response {
	return openaitest.Response{Events: []string{
		chunk(map[string]any{"role": "assistant", "content": text}, ""),
		chunk(map[string]any{}, "stop"),
		openaitest.UsageChunk(testModel, promptTokens, int64(len(text)/4), 0),
	}}
}

const summary = "## Goal\nAnswer the questions.\n## Constraints and user preferences\nnone\n## Decisions\nnone\n## Work done\nAnswered the first question.\n## Files touched\nnone\n## Open tasks\nthe second question\n## Next step\nanswer it"

var longReply = "FIRST-REPLY " + strings.Repeat("The first answer is long and detailed. ", 40)

func isCompactionRequest(r openaitest.Request) bool {
	return strings.Contains(string(r.Body), "## Files touched") && !strings.Contains(string(r.Body), `"stream":true`)
}

func TestAutomaticCompactionAtTheMark(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, map[string]any{"maxInputTokens": 1000}, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(reply(longReply, 400))
	k.send(t, sid, "first question")
	w.turnEnd()

	var cu struct {
		Session struct {
			ContextUsage struct {
				Tokens, Limit int
				Estimated     bool
			}
		}
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { contextUsage { tokens limit estimated } } }`, map[string]any{"s": sid}, &cu)
	if cu.Session.ContextUsage.Limit != 1000 || cu.Session.ContextUsage.Estimated || cu.Session.ContextUsage.Tokens < 400 {
		t.Fatalf("context usage %+v", cu.Session.ContextUsage)
	}

	second := "SECOND-QUESTION " + strings.Repeat("with plenty of detail ", 150)
	k.fake.Enqueue(openaitest.Completion(testModel, summary, "stop", 700, 60), reply("second answer", 300))
	k.send(t, sid, second)
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	reqs := k.fake.Requests()
	if len(reqs) != 3 || !isCompactionRequest(reqs[1]) {
		t.Fatalf("%d requests; the second must be a compaction request: %.300s", len(reqs), reqs[1].Body)
	}
	if !strings.Contains(string(reqs[1].Body), "FIRST-REPLY") {
		t.Fatal("the compaction request lacks the history it summarizes")
	}
	rm := k.requestMessages(t, 2)
	body := string(reqs[2].Body)
	if strings.Contains(body, "FIRST-REPLY") {
		t.Fatal("the covered history was sent after compaction")
	}
	if rm[1]["role"] != "system" || !strings.Contains(rm[1]["content"].(string), "Context checkpoint") || !strings.Contains(rm[1]["content"].(string), "## Next step") {
		t.Fatalf("no checkpoint system message: %+v", rm[1])
	}
	if last := rm[len(rm)-1]; last["role"] != "user" || last["content"] != second {
		t.Fatalf("the newest user turn is not verbatim: %+v", last)
	}
	// History is untouched; events record the compaction and its usage.
	if msgs := k.messages(t, sid); len(msgs) != 4 || msgs[1].Text != longReply {
		t.Fatalf("history changed: %+v", msgs)
	}
	var evs struct {
		Events []struct {
			Type    string
			Payload json.RawMessage
		}
	}
	k.mustDo(t, `query($s: ID!) { events(sessionId: $s) { type payload } }`, map[string]any{"s": sid}, &evs)
	var types []string
	for _, e := range evs.Events {
		types = append(types, e.Type)
	}
	joined := strings.Join(types, ",")
	if !strings.Contains(joined, "compaction_started,usage,compaction_checkpoint") {
		t.Fatalf("events %s", joined)
	}

	// A route change invalidates the checkpoint: same server, other base URL.
	conn := k.firstConnection(t)
	k.mustDo(t, `mutation($id: ID!, $u: String) { updateConnection(id: $id, input: {baseUrl: $u, apiKey: "sk-fake", models: [{id: "gpt-t", capabilities: {maxInputTokens: 100000}}]}) { id } }`,
		map[string]any{"id": conn, "u": strings.Replace(k.fake.BaseURL(), "127.0.0.1", "localhost", 1)}, nil)
	k.fake.Enqueue(reply("third answer", 900))
	k.send(t, sid, "third")
	w.turnEnd()
	body = string(k.fake.LastRequest().Body)
	if strings.Contains(body, "Context checkpoint") || !strings.Contains(body, "FIRST-REPLY") {
		t.Fatal("a checkpoint of another route was used")
	}
}

func TestOverflowCompactsOnceThenRetries(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(reply(longReply, 400))
	k.send(t, sid, "first")
	w.turnEnd()

	overflow := openaitest.Error(400, "invalid_request_error", "context_length_exceeded", "This model's maximum context length is 1000 tokens. However, your messages resulted in 1200 tokens.")
	k.fake.Enqueue(overflow, openaitest.Completion(testModel, summary, "stop", 700, 60), reply("fits now", 200))
	k.send(t, sid, "second")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	reqs := k.fake.Requests()
	if len(reqs) != 4 || !isCompactionRequest(reqs[2]) || !strings.Contains(string(reqs[3].Body), "Context checkpoint") {
		t.Fatalf("%d requests; want stream, overflow, compaction, retry", len(reqs))
	}

	// A second overflow after compaction fails the turn, clearly.
	k.fake.Enqueue(overflow, openaitest.Completion(testModel, "## Goal\nshort", "stop", 100, 10), overflow)
	k.send(t, sid, "third")
	p := w.turnEnd()
	if p.Status != core.TurnFailed || !strings.Contains(p.Reason, "context_overflow") || !strings.Contains(p.Reason, "still overflows") {
		t.Fatalf("turn %+v", p)
	}
	if n := len(k.fake.Requests()); n != 7 {
		t.Fatalf("%d requests, want 7: compaction must not loop", n)
	}
}

func TestRewindInvalidatesCheckpoint(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(reply(longReply, 400))
	k.send(t, sid, "first")
	w.turnEnd()
	k.fake.Enqueue(reply("second", 400))
	k.send(t, sid, "second")
	w.turnEnd()
	k.fake.Enqueue(openaitest.Completion(testModel, summary, "stop", 700, 60))
	k.mustDo(t, `mutation($s: ID!) { compactSession(sessionId: $s) { phase } }`, map[string]any{"s": sid}, nil)
	k.mustFail(t, "CONFLICT", `mutation($s: ID!) { compactSession(sessionId: $s) { phase } }`, map[string]any{"s": sid})

	k.fake.Enqueue(reply("third", 300))
	k.send(t, sid, "third")
	w.turnEnd()
	if !strings.Contains(string(k.fake.LastRequest().Body), "Context checkpoint") {
		t.Fatal("the manual checkpoint was not used")
	}
	// Rewind to the first message: the checkpoint covered removed messages.
	userSeq := k.messages(t, sid)[0].Seq
	p := k.preview(t, sid, userSeq)
	k.mustDo(t, confirmQ, map[string]any{"s": sid, "m": userSeq, "h": p.HeadSeq, "t": p.FileStateToken}, nil)
	k.fake.Enqueue(reply("fresh", 100))
	k.send(t, sid, "fresh start")
	w.turnEnd()
	if body := string(k.fake.LastRequest().Body); strings.Contains(body, "Context checkpoint") || strings.Contains(body, "FIRST-REPLY") {
		t.Fatal("rewound history or its checkpoint reached the model")
	}
}

func TestLargeToolResultIsExcerpted(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, map[string]any{"maxInputTokens": 4000}, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_big", "big", `{}`), ""),
		chunk(map[string]any{}, "tool_calls"),
		openaitest.UsageChunk(testModel, 300, 10, 0),
	}}, openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_read", "read_tool_result", `{"seq": 999999, "offset": 30014, "length": 30}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, reply("got it", 600))
	k.send(t, sid, "fetch the big thing")
	w.turnEnd()
	msgs := k.messages(t, sid)
	var bigSeq int64
	for _, m := range msgs {
		if deref(m.ToolName) == "big" {
			bigSeq = m.Seq
			if m.Text != BigResult {
				t.Fatal("the stored tool result was changed")
			}
		}
	}
	body := string(k.fake.Requests()[1].Body)
	if strings.Contains(body, "MIDDLE-LANDMARK") || !strings.Contains(body, "HEAD-LANDMARK") || !strings.Contains(body, "TAIL-LANDMARK") {
		t.Fatal("the large result was not excerpted head + tail")
	}
	if !strings.Contains(body, fmt.Sprintf(`{\"seq\": %d`, bigSeq)) || !strings.Contains(body, "read_tool_result") {
		t.Fatalf("the marker does not name seq %d: %.400s", bigSeq, body[strings.Index(body, "truncated"):])
	}
	// A read of a seq that is no tool result fails helpfully; a real one
	// returns the omitted middle.
	last := msgs[len(msgs)-2]
	if !last.IsError || !strings.Contains(last.Text, "no tool result with seq 999999") {
		t.Fatalf("placeholder read %+v", last)
	}
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_read2", "read_tool_result", fmt.Sprintf(`{"seq": %d, "offset": 30014, "length": 30}`, bigSeq)), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, reply("read it", 600))
	k.send(t, sid, "read the middle")
	w.turnEnd()
	msgs = k.messages(t, sid)
	got := msgs[len(msgs)-2]
	if got.IsError || !strings.Contains(got.Text, "MIDDLE-LANDMARK") {
		t.Fatalf("read_tool_result %+v", got)
	}
}

func TestNativeCompactionWhenDeclared(t *testing.T) {
	k := newTestKernel(t)
	conn := k.createConn(t, map[string]any{"name": "native", "providerKind": "native", "baseUrl": k.fake.BaseURL(), "models": []any{map[string]any{"id": testModel}}})
	var s struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation($c: ID) { createSession(input: {connectionId: $c, title: "n", approvalMode: BYPASS}) { id } }`, map[string]any{"c": conn.ID}, &s)
	sid := s.CreateSession.ID
	w := k.watch(t, sid)
	k.fake.Enqueue(reply(longReply, 400), reply("two", 400))
	k.send(t, sid, "one")
	w.turnEnd()
	k.send(t, sid, "two")
	w.turnEnd()
	k.mustDo(t, `mutation($s: ID!) { compactSession(sessionId: $s) { id } }`, map[string]any{"s": sid}, nil)
	np := k.providers.kinds["native"].(*nativeProvider)
	if np.compactions != 1 || len(k.fake.Requests()) != 2 {
		t.Fatalf("native compactions %d, HTTP requests %d (the portable path must not run)", np.compactions, len(k.fake.Requests()))
	}
	ev, err := k.db.LatestEvent(context.Background(), sid, core.EventCompactionCheckpoint)
	if err != nil || !strings.Contains(string(ev.Payload), `"native":true`) {
		t.Fatalf("checkpoint %s %v", ev.Payload, err)
	}
}

// A summary that saves nothing is a failure, remembered for that history: a
// second attempt does not ask the model again.
func TestFailedCompactionIsNotRetried(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(reply("short", 100), reply("short too", 100))
	k.send(t, sid, "one")
	w.turnEnd()
	k.send(t, sid, "two")
	w.turnEnd()
	k.fake.Enqueue(openaitest.Completion(testModel, strings.Repeat("a summary longer than what it summarizes ", 20), "stop", 50, 200))
	msg := k.mustFail(t, "PROVIDER_ERROR", `mutation($s: ID!) { compactSession(sessionId: $s) { id } }`, map[string]any{"s": sid})
	if !strings.Contains(msg, "save nothing") {
		t.Fatalf("message %q", msg)
	}
	n := len(k.fake.Requests())
	msg = k.mustFail(t, "UNAVAILABLE", `mutation($s: ID!) { compactSession(sessionId: $s) { id } }`, map[string]any{"s": sid})
	if !strings.Contains(msg, "not retrying") || len(k.fake.Requests()) != n {
		t.Fatalf("retried: %q, %d → %d requests", msg, n, len(k.fake.Requests()))
	}
	var s struct{ Session struct{ Phase string } }
	k.mustDo(t, `query($s: ID!) { session(id: $s) { phase } }`, map[string]any{"s": sid}, &s)
	if s.Session.Phase != "IDLE" {
		t.Fatalf("phase %s", s.Session.Phase)
	}
}

// One long turn of tool rounds outgrows the budget: the checkpoint cuts
// inside the turn, keeps the last round verbatim and carries the user's
// request word for word.
func TestCompactionInsideALongTurn(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, map[string]any{"maxInputTokens": 3000}, "BYPASS")
	w := k.watch(t, sid)
	for i, prompt := range []int64{500, 1300, 2100, 2900} {
		k.fake.Enqueue(openaitest.Response{Events: []string{
			chunk(toolCallDelta(0, fmt.Sprint("c", i), "big", `{}`), ""),
			chunk(map[string]any{}, "tool_calls"),
			openaitest.UsageChunk(testModel, prompt, 10, 0),
		}})
	}
	k.fake.Enqueue(openaitest.Completion(testModel, summary, "stop", 900, 60), reply("Done investigating.", 1200))
	k.send(t, sid, "investigate deeply, then report")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		for i, r := range k.fake.Requests() {
			t.Logf("request %d: compaction=%v len=%d landmarks=%d", i, isCompactionRequest(r), len(r.Body), strings.Count(string(r.Body), "HEAD-LANDMARK"))
		}
		t.Fatalf("turn %+v", p)
	}
	reqs := k.fake.Requests()
	ci := -1
	for i, r := range reqs {
		if isCompactionRequest(r) {
			ci = i
		}
	}
	if ci < 2 || ci+1 >= len(reqs) {
		t.Fatalf("no compaction inside the turn (%d requests)", len(reqs))
	}
	before, after := string(reqs[ci-1].Body), string(reqs[ci+1].Body)
	if strings.Count(before, "HEAD-LANDMARK") < 2 {
		t.Fatal("the request before compaction should carry several rounds")
	}
	if n := strings.Count(after, "HEAD-LANDMARK"); n != 1 {
		t.Fatalf("after compaction %d rounds were sent verbatim, want the last one", n)
	}
	if !strings.Contains(after, "current request, verbatim") || !strings.Contains(after, "investigate deeply, then report") {
		t.Fatal("the user's request was not carried verbatim")
	}
}
