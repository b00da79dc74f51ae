package graph_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// hanging streams some text and reasoning, then hangs until cancelled.
func hanging() openaitest.Response {
	return openaitest.Response{Hang: true, Events: []string{
		chunk(map[string]any{"role": "assistant", "reasoning_content": "Thinking hard"}, ""),
		chunk(map[string]any{"content": "Partial ans"}, ""),
	}}
}

func TestCancelKeepsPartialOutput(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(hanging())
	k.send(t, sid, "long task")
	w.next(core.EventMessageDelta)
	var stop struct{ StopTurn struct{ Phase string } }
	k.mustDo(t, `mutation($s: ID!) { stopTurn(sessionId: $s) { phase } }`, map[string]any{"s": sid}, &stop)
	if stop.StopTurn.Phase != "IDLE" {
		t.Fatalf("phase after stop = %s", stop.StopTurn.Phase)
	}
	select {
	case <-k.fake.Cancelled():
	case <-time.After(10 * time.Second):
		t.Fatal("the HTTP request was not aborted")
	}
	if p := w.turnEnd(); p.Status != core.TurnCancelled || !strings.Contains(p.Reason, "stopped") {
		t.Fatalf("turn %+v", p)
	}
	msgs := k.messages(t, sid)
	if len(msgs) != 2 || msgs[1].Text != "Partial ans" || deref(msgs[1].Reasoning) != "Thinking hard" || !msgs[1].Interrupted || deref(msgs[1].TurnStatus) != "CANCELLED" {
		t.Fatalf("messages %+v", msgs)
	}
	// The next request carries the partial text with the interruption marker
	// and, unlike normal reasoning, the interrupted reasoning.
	k.fake.Enqueue(openaitest.TextStream(testModel, "Resuming."))
	k.send(t, sid, "go on")
	w.turnEnd()
	body := string(k.fake.Requests()[1].Body)
	if !strings.Contains(body, "Partial ans") || !strings.Contains(body, "interrupted by the user") || !strings.Contains(body, "Thinking hard") {
		t.Fatalf("second request lacks the interrupted reply: %s", body)
	}
}

type queueJSON struct {
	ID, Text string
	Revision int
}

func (k *testKernel) queue(t *testing.T, sid string) []queueJSON {
	var out struct {
		Session struct{ Queue []queueJSON }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { queue { id text revision } } }`, map[string]any{"s": sid}, &out)
	return out.Session.Queue
}

func texts(q []queueJSON) string {
	var s []string
	for _, it := range q {
		s = append(s, it.Text)
	}
	return strings.Join(s, ",")
}

func TestQueueEditMoveDeleteDispatch(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(hanging())
	if !k.send(t, sid, "first").SendMessage.TurnStarted {
		t.Fatal("first did not start")
	}
	w.next(core.EventMessageDelta)
	var ids []string
	for _, txt := range []string{"a", "b", "c"} {
		r := k.send(t, sid, txt)
		if r.SendMessage.TurnStarted || r.SendMessage.QueueItem == nil || r.SendMessage.QueueItem.Text != txt {
			t.Fatalf("queued %s: %+v", txt, r)
		}
		ids = append(ids, r.SendMessage.QueueItem.ID)
	}
	snap := w.next(core.EventQueueSnapshot)
	if snap.Seq != 0 {
		t.Fatal("queue snapshot has a seq")
	}
	k.mustDo(t, `mutation($s: ID!, $i: ID!) { editQueuedMessage(sessionId: $s, itemId: $i, input: {text: "b2"}) { id } }`, map[string]any{"s": sid, "i": ids[1]}, nil)
	k.mustDo(t, `mutation($s: ID!, $i: ID!) { moveQueuedMessage(sessionId: $s, itemId: $i, index: 0) { id } }`, map[string]any{"s": sid, "i": ids[2]}, nil)
	k.mustDo(t, `mutation($s: ID!, $i: ID!) { deleteQueuedMessage(sessionId: $s, itemId: $i) { id } }`, map[string]any{"s": sid, "i": ids[0]}, nil)
	q := k.queue(t, sid)
	if texts(q) != "c,b2" || q[1].Revision != 1 {
		t.Fatalf("queue %+v", q)
	}
	k.mustFail(t, "BAD_INPUT", `mutation($s: ID!, $i: ID!) { moveQueuedMessage(sessionId: $s, itemId: $i, index: 5) { id } }`, map[string]any{"s": sid, "i": ids[2]})
	k.mustFail(t, "NOT_FOUND", `mutation($s: ID!, $i: ID!) { deleteQueuedMessage(sessionId: $s, itemId: $i) { id } }`, map[string]any{"s": sid, "i": ids[0]})
	k.mustFail(t, "BAD_INPUT", `mutation($s: ID!, $i: ID!) { editQueuedMessage(sessionId: $s, itemId: $i, input: {text: "  "}) { id } }`, map[string]any{"s": sid, "i": ids[1]})

	// Stop and dispatch b2: it runs next, c stays queued.
	k.fake.Enqueue(openaitest.TextStream(testModel, "B2 done"), openaitest.TextStream(testModel, "C done"))
	k.mustDo(t, `mutation($s: ID!, $i: ID) { stopTurn(sessionId: $s, dispatchItemId: $i) { id } }`, map[string]any{"s": sid, "i": ids[1]}, nil)
	if p := w.turnEnd(); p.Status != core.TurnCancelled {
		t.Fatalf("first turn %+v", p)
	}
	w.turnEnd() // b2
	w.turnEnd() // c
	var users []string
	for _, m := range k.messages(t, sid) {
		if m.Role == "USER" {
			users = append(users, m.Text)
		}
	}
	if strings.Join(users, ",") != "first,b2,c" {
		t.Fatalf("user messages in order %v", users)
	}
	// A deleted item never ran, and the edited one ran in its new form only.
	for _, r := range k.fake.Requests() {
		if strings.Contains(string(r.Body), `"content":"a"`) || strings.Contains(string(r.Body), `"content":"b"`) {
			t.Fatalf("a deleted or stale item reached the model: %s", r.Body)
		}
	}
}

func TestStopKeepsOrClearsQueue(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)

	// keepQueue (default): the queue waits for the next sendMessage.
	k.fake.Enqueue(hanging())
	k.send(t, sid, "one")
	w.next(core.EventMessageDelta)
	k.send(t, sid, "queued-1")
	k.mustDo(t, `mutation($s: ID!) { stopTurn(sessionId: $s) { id } }`, map[string]any{"s": sid}, nil)
	w.turnEnd()
	time.Sleep(100 * time.Millisecond)
	if q := k.queue(t, sid); texts(q) != "queued-1" {
		t.Fatalf("kept queue %+v", q)
	}
	if n := len(k.fake.Requests()); n != 1 {
		t.Fatalf("the held queue ran: %d requests", n)
	}
	k.fake.Enqueue(openaitest.TextStream(testModel, "r1"), openaitest.TextStream(testModel, "r2"))
	r := k.send(t, sid, "queued-2")
	if r.SendMessage.TurnStarted || r.SendMessage.QueueItem == nil {
		t.Fatalf("send after hold = %+v", r)
	}
	w.turnEnd()
	w.turnEnd()
	var users []string
	for _, m := range k.messages(t, sid) {
		if m.Role == "USER" {
			users = append(users, m.Text)
		}
	}
	if strings.Join(users, ",") != "one,queued-1,queued-2" {
		t.Fatalf("order %v", users)
	}

	// keepQueue: false clears it.
	k.fake.Enqueue(hanging())
	k.send(t, sid, "two")
	w.next(core.EventMessageDelta)
	k.send(t, sid, "dropped")
	k.mustDo(t, `mutation($s: ID!) { stopTurn(sessionId: $s, keepQueue: false) { id } }`, map[string]any{"s": sid}, nil)
	w.turnEnd()
	if q := k.queue(t, sid); len(q) != 0 {
		t.Fatalf("queue not cleared: %+v", q)
	}
}

func TestProviderErrors(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)

	k.fake.Enqueue(openaitest.Error(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota"))
	k.send(t, sid, "hello")
	p := w.turnEnd()
	if p.Status != core.TurnFailed || !strings.HasPrefix(p.Reason, "quota:") {
		t.Fatalf("turn %+v", p)
	}
	if n := len(k.fake.Requests()); n != 1 {
		t.Fatalf("%d requests after a quota error; want 1 (no compaction, no retry)", n)
	}

	// A stream dropped mid-way keeps what arrived.
	k.fake.Enqueue(openaitest.Response{DropAfter: 2, Events: []string{
		chunk(map[string]any{"role": "assistant", "content": "Half of"}, ""),
		chunk(map[string]any{"content": " it"}, ""),
		chunk(map[string]any{"content": " never"}, ""),
	}})
	k.send(t, sid, "again")
	p = w.turnEnd()
	if p.Status != core.TurnFailed || !strings.HasPrefix(p.Reason, "network:") {
		t.Fatalf("turn %+v", p)
	}
	msgs := k.messages(t, sid)
	last := msgs[len(msgs)-1]
	if last.Text != "Half of it" || deref(last.TurnStatus) != "FAILED" {
		t.Fatalf("partial %+v", last)
	}
	var s struct{ Session struct{ Phase string } }
	k.mustDo(t, `query($s: ID!) { session(id: $s) { phase } }`, map[string]any{"s": sid}, &s)
	if s.Session.Phase != "IDLE" {
		t.Fatalf("phase %s", s.Session.Phase)
	}
}

func TestInputValidation(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, map[string]any{"imageInput": false}, "BYPASS")
	const send = `mutation($s: ID!, $in: UserInput!) { sendMessage(sessionId: $s, input: $in) { turnStarted } }`
	k.mustFail(t, "BAD_INPUT", send, map[string]any{"s": sid, "in": map[string]any{"text": "   "}})
	k.mustFail(t, "BAD_INPUT", send, map[string]any{"s": sid, "in": map[string]any{"text": "x", "attachmentIds": []string{"att_nope"}}})
	k.mustFail(t, "BAD_INPUT", send, map[string]any{"s": sid, "in": map[string]any{"text": "x", "browserElements": []any{map[string]any{"url": "javascript:alert(1)"}}}})
	k.mustFail(t, "NOT_FOUND", send, map[string]any{"s": "ses_nope", "in": map[string]any{"text": "x"}})

	// An image for a model that explicitly has no image input.
	att := k.upload(t, "dot.png", pngBytes(t))
	msg := k.mustFail(t, "BAD_INPUT", send, map[string]any{"s": sid, "in": map[string]any{"text": "look", "attachmentIds": []string{att}}})
	if !strings.Contains(msg, "image") {
		t.Fatalf("message %q", msg)
	}
	if n := len(k.fake.Requests()); n != 0 {
		t.Fatal("a refused input reached the model")
	}

	// A session without a model: UNAVAILABLE.
	var s struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation { createSession(input: {title: "x"}) { id } }`, nil, &s)
	k.mustDo(t, `mutation($id: ID!) { deleteConnection(id: $id) }`, map[string]any{"id": k.firstConnection(t)}, nil)
	k.mustFail(t, "UNAVAILABLE", send, map[string]any{"s": s.CreateSession.ID, "in": map[string]any{"text": "x"}})
}

func (k *testKernel) firstConnection(t *testing.T) string {
	var out struct{ Connections []struct{ ID string } }
	k.mustDo(t, `{ connections { id } }`, nil, &out)
	return out.Connections[0].ID
}

func TestTitleGenerated(t *testing.T) {
	k := newTestKernel(t)
	conn := k.createConn(t, map[string]any{"name": "fake", "baseUrl": k.fake.BaseURL(), "models": []any{map[string]any{"id": testModel}, map[string]any{"id": "gpt-fast"}}})
	k.mustDo(t, `mutation($c: ID) { setDefaultModel(purpose: FAST, connectionId: $c, model: "gpt-fast") { fast { model } } }`, map[string]any{"c": conn.ID}, nil)
	var s struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation { createSession(input: {approvalMode: BYPASS}) { id } }`, nil, &s)
	sid := s.CreateSession.ID
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.TextStream(testModel, "Paris."), openaitest.Completion("gpt-fast", "\"Capital of France.\"", "stop", 12, 4))
	k.send(t, sid, "What is the capital of France?")
	w.turnEnd()
	ev := w.next(core.EventSessionUpdated)
	var p core.SessionPayload
	ev.Decode(&p)
	if p.Session.Title != "Capital of France" {
		t.Fatalf("title %q", p.Session.Title)
	}
	var body map[string]any
	reqs := k.fake.Requests()
	if err := jsonUnmarshal(reqs[1].Body, &body); err != nil || body["model"] != "gpt-fast" {
		t.Fatalf("title request %s", reqs[1].Body)
	}
}

func TestApprovalsAcrossClients(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "ASK")
	w := k.watch(t, sid)
	noteCall := func(id string) openaitest.Response {
		return openaitest.Response{Events: []string{chunk(toolCallDelta(0, id, "note", `{"q":"remember"}`), ""), chunk(map[string]any{}, "tool_calls")}}
	}
	k.fake.Enqueue(noteCall("call_1"), openaitest.TextStream(testModel, "Noted."))
	k.send(t, sid, "note it")
	var req core.ApprovalPayload
	w.next(core.EventApprovalRequested).Decode(&req)
	if req.Tool != "note" || req.Action != "write" || req.Summary == "" {
		t.Fatalf("approval %+v", req)
	}
	// Two clients race to decide: exactly one wins, the other gets CONFLICT.
	var wg sync.WaitGroup
	codes := make([]string, 2)
	for i, d := range []string{"APPROVED", "DENIED"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := k.do(t, `mutation($s: ID!, $r: ID!, $d: ApprovalDecision!) { resolveApproval(sessionId: $s, requestId: $r, decision: $d) }`,
				map[string]any{"s": sid, "r": req.RequestID, "d": d})
			if len(r.Errors) > 0 {
				codes[i] = r.Errors[0].Extensions.Code
			} else {
				codes[i] = "OK"
			}
		}()
	}
	wg.Wait()
	if !(codes[0] == "OK" && codes[1] == "CONFLICT" || codes[0] == "CONFLICT" && codes[1] == "OK") {
		t.Fatalf("decisions %v", codes)
	}
	var res core.ApprovalPayload
	w.next(core.EventApprovalResolved).Decode(&res)
	w.turnEnd()
	msgs := k.messages(t, sid)
	tool := msgs[2]
	if res.Decision == core.ApprovalApproved && (tool.IsError || tool.Text != "noted: remember") ||
		res.Decision == core.ApprovalDenied && (!tool.IsError || !strings.Contains(tool.Text, "denied")) {
		t.Fatalf("decision %s, tool message %+v", res.Decision, tool)
	}

	// APPROVED_FOR_SESSION: the next call of the same class does not ask.
	k.fake.Enqueue(noteCall("call_2"), openaitest.TextStream(testModel, "ok"), noteCall("call_3"), openaitest.TextStream(testModel, "ok"))
	k.send(t, sid, "again")
	w.next(core.EventApprovalRequested).Decode(&req)
	k.mustDo(t, `mutation($s: ID!, $r: ID!) { resolveApproval(sessionId: $s, requestId: $r, decision: APPROVED_FOR_SESSION) }`, map[string]any{"s": sid, "r": req.RequestID}, nil)
	w.turnEnd()
	k.send(t, sid, "and again")
	w.turnEnd()
	msgs = k.messages(t, sid)
	if last := msgs[len(msgs)-2]; last.IsError || last.Text != "noted: remember" {
		t.Fatalf("granted call %+v", last)
	}

	// Stopping the turn cancels a pending approval (a new tool class asks again).
	k.fake.Enqueue(openaitest.Response{Events: []string{chunk(toolCallDelta(0, "call_4", "note", `{"q":"x"}`), ""), chunk(map[string]any{}, "tool_calls")}})
	k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {approvalMode: BYPASS}) { id } }`, map[string]any{"s": sid}, nil)
	k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {approvalMode: ASK}) { id } }`, map[string]any{"s": sid}, nil)
	k.engine.Requests().ForgetGrants(sid)
	k.send(t, sid, "one more")
	w.next(core.EventApprovalRequested).Decode(&req)
	k.mustDo(t, `mutation($s: ID!) { stopTurn(sessionId: $s) { id } }`, map[string]any{"s": sid}, nil)
	if p := w.turnEnd(); p.Status != core.TurnCancelled {
		t.Fatalf("turn %+v", p)
	}
	k.mustFail(t, "CONFLICT", `mutation($s: ID!, $r: ID!) { resolveApproval(sessionId: $s, requestId: $r, decision: APPROVED) }`, map[string]any{"s": sid, "r": req.RequestID})
	msgs = k.messages(t, sid)
	if last := msgs[len(msgs)-1]; last.Role != "TOOL" || !last.IsError || !strings.Contains(last.Text, "stopped") {
		t.Fatalf("cancelled approval left %+v", last)
	}
}

func TestExploreAndPlanRefuseWrites(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "EXPLORE")
	w := k.watch(t, sid)
	calls := openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "call_r", "lookup", `{"q":"x"}`), ""),
		chunk(toolCallDelta(1, "call_w", "note", `{"q":"y"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}
	k.fake.Enqueue(calls, openaitest.TextStream(testModel, "done"))
	k.send(t, sid, "explore")
	w.turnEnd()
	msgs := k.messages(t, sid)
	if msgs[2].IsError || !msgs[3].IsError || !strings.Contains(msgs[3].Text, "EXPLORE") {
		t.Fatalf("explore: %+v %+v", msgs[2], msgs[3])
	}
	k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {approvalMode: BYPASS, agentMode: PLAN}) { id } }`, map[string]any{"s": sid}, nil)
	k.fake.Enqueue(calls, openaitest.TextStream(testModel, "planned"))
	k.send(t, sid, "plan")
	w.turnEnd()
	msgs = k.messages(t, sid)
	if n := len(msgs); !msgs[n-2].IsError || !strings.Contains(msgs[n-2].Text, "planning") {
		t.Fatalf("plan: %+v", msgs[n-2])
	}
}

func TestQuestionAndTasks(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "ASK")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "call_q", "question", `{"question":"Which color?"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "call_t", "tasks", `{"tasks":[{"text":"paint","status":"in_progress"},{"text":"dry","status":"pending"}]}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "Painting it blue."))
	k.send(t, sid, "paint the fence")
	var q core.QuestionPayload
	w.next(core.EventQuestionRequested).Decode(&q)
	// A second client answers.
	k.mustDo(t, `mutation($s: ID!, $r: ID!) { answerQuestion(sessionId: $s, requestId: $r, answer: "blue") }`, map[string]any{"s": sid, "r": q.RequestID}, nil)
	k.mustFail(t, "CONFLICT", `mutation($s: ID!, $r: ID!) { answerQuestion(sessionId: $s, requestId: $r, answer: "red") }`, map[string]any{"s": sid, "r": q.RequestID})
	w.turnEnd()
	msgs := k.messages(t, sid)
	if msgs[2].Text != "blue" {
		t.Fatalf("answer tool message %+v", msgs[2])
	}
	var s struct {
		Session struct {
			Tasks []struct{ Text, Status string }
		}
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { tasks { text status } } }`, map[string]any{"s": sid}, &s)
	if len(s.Session.Tasks) != 2 || s.Session.Tasks[0].Status != "IN_PROGRESS" {
		t.Fatalf("tasks %+v", s.Session.Tasks)
	}
}

func TestDeleteRacingALiveTurn(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.TextStream(testModel, "done"))
	k.send(t, sid, "first")
	w.turnEnd()
	var before struct{ UsageTotals struct{ TotalTokens int } }
	k.mustDo(t, `{ usageTotals { totalTokens } }`, nil, &before)

	k.fake.Enqueue(hanging())
	k.send(t, sid, "second")
	w.next(core.EventMessageDelta)
	k.send(t, sid, "queued")
	k.mustDo(t, `mutation($s: ID!) { deleteSession(id: $s) }`, map[string]any{"s": sid}, nil)
	w.next(core.EventSessionDeleted)

	var after struct {
		Session     *struct{ ID string }
		UsageTotals struct{ TotalTokens int }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { id } usageTotals { totalTokens } }`, map[string]any{"s": sid}, &after)
	if after.Session != nil {
		t.Fatal("deleted session came back")
	}
	if after.UsageTotals.TotalTokens < before.UsageTotals.TotalTokens {
		t.Fatalf("ledger lost usage: %d → %d", before.UsageTotals.TotalTokens, after.UsageTotals.TotalTokens)
	}
	evs, err := k.db.Events(context.Background(), sid, 0, 100)
	if err != nil || len(evs) != 0 {
		t.Fatalf("events left: %d %v", len(evs), err)
	}
	msgs, _ := k.db.Messages(context.Background(), sid, true)
	if len(msgs) != 0 {
		t.Fatalf("messages left: %d", len(msgs))
	}
	// The queued message never ran.
	time.Sleep(100 * time.Millisecond)
	for _, r := range k.fake.Requests() {
		if strings.Contains(string(r.Body), `"queued"`) {
			t.Fatal("a queued message of a deleted session ran")
		}
	}
}

// Edits and deletes race against dispatch: an edited item never runs in its
// old form, a deleted item never runs, and every other item runs once.
func TestQueueRacesAgainstDispatch(t *testing.T) {
	t.Parallel()
	// 24 concurrent requests from one peer: over the default of 16 in flight.
	k := newTestKernel(t, func(c *edge.Config) { c.Limits.MaxInFlightPerPeer = 64 })
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	const n = 24
	k.fake.Enqueue(openaitest.Response{Delay: 20 * time.Millisecond, Events: []string{
		chunk(map[string]any{"role": "assistant", "content": "slow"}, ""), chunk(map[string]any{"content": " start"}, ""), chunk(map[string]any{}, "stop"),
	}})
	for range n {
		k.fake.Enqueue(openaitest.TextStream(testModel, "ok"))
	}
	k.send(t, sid, "first")
	ids := make([]string, n)
	for i := range n {
		ids[i] = k.send(t, sid, fmt.Sprintf("item-%d", i)).SendMessage.QueueItem.ID
	}
	edited := make([]bool, n)
	deleted := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%3 == 0 {
				r := k.do(t, `mutation($s: ID!, $i: ID!) { deleteQueuedMessage(sessionId: $s, itemId: $i) { id } }`, map[string]any{"s": sid, "i": ids[i]})
				deleted[i] = len(r.Errors) == 0
				return
			}
			r := k.do(t, `mutation($s: ID!, $i: ID!, $t: String) { editQueuedMessage(sessionId: $s, itemId: $i, input: {text: $t}) { id } }`,
				map[string]any{"s": sid, "i": ids[i], "t": fmt.Sprintf("edited-%d", i)})
			edited[i] = len(r.Errors) == 0
			if len(r.Errors) > 0 && r.Errors[0].Extensions.Code != "NOT_FOUND" {
				t.Errorf("edit %d: %+v", i, r.Errors)
			}
		}()
	}
	wg.Wait()
	runs := 1
	for i := range n {
		if !deleted[i] {
			runs++
		}
	}
	for range runs {
		w.turnEnd()
	}
	ran := map[string]int{}
	for _, m := range k.messages(t, sid) {
		if m.Role == "USER" {
			ran[m.Text]++
		}
	}
	for i := range n {
		orig, ed := fmt.Sprintf("item-%d", i), fmt.Sprintf("edited-%d", i)
		switch {
		case deleted[i]:
			if ran[orig]+ran[ed] != 0 {
				t.Errorf("deleted item %d ran", i)
			}
		case edited[i]:
			if ran[orig] != 0 || ran[ed] != 1 {
				t.Errorf("edited item %d ran as %d old / %d new", i, ran[orig], ran[ed])
			}
		default:
			if ran[orig]+ran[ed] != 1 {
				t.Errorf("item %d ran %d times", i, ran[orig]+ran[ed])
			}
		}
	}
}
