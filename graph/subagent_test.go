package graph_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

func TestSubAgentChildSession(t *testing.T) {
	k := newTestKernel(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".foya", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	agentFile := filepath.Join(dir, ".foya", "agents", "researcher.md")
	writeFile(t, agentFile, "---\nname: researcher\ndescription: Looks things up.\ntools: lookup\nmax_turns: 3\n---\nOnly look things up; answer in one line.\n")
	sid := projectSession(t, k, dir)
	w := k.watch(t, sid)

	// Parent: call task; child: call lookup, then answer; parent: final.
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_task", "task", `{"agent":"researcher","prompt":"find the answer"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_look", "lookup", `{"q":"answer"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "The answer is 42."), openaitest.TextStream(testModel, "The sub-agent says 42."))
	k.send(t, sid, "delegate")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("parent turn %+v", p)
	}
	msgs := k.messages(t, sid)
	if tool := msgs[2]; deref(tool.ToolName) != "task" || tool.IsError || tool.Text != "The answer is 42." {
		t.Fatalf("task result %+v", tool)
	}
	var out struct {
		Session struct {
			Children []struct {
				ID, ParentID, Source string
				Agent                struct {
					Name     string
					Tools    []string
					MaxTurns int
				}
				Messages []struct{ Role, Text string }
			}
		}
		Sessions    []struct{ ID string }
		AllSessions []struct{ ID string } `json:"all"`
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { children { id parentId source agent { name tools maxTurns } messages { role text } } } sessions { id } all: sessions(includeChildren: true) { id } }`, map[string]any{"s": sid}, &out)
	if len(out.Session.Children) != 1 || out.Session.Children[0].ParentID != sid || len(out.Sessions) != 1 || len(out.AllSessions) != 2 {
		t.Fatalf("children %+v sessions %d/%d", out.Session.Children, len(out.Sessions), len(out.AllSessions))
	}
	child := out.Session.Children[0]
	if child.Source != "task:c_task" || child.Agent.Name != "researcher" || child.Agent.MaxTurns != 3 || len(child.Agent.Tools) != 1 {
		t.Fatalf("child %+v", child)
	}
	if len(child.Messages) != 4 || child.Messages[0].Text != "find the answer" {
		t.Fatalf("child history %+v", child.Messages)
	}
	// The child saw only its allowed tools and its instructions.
	childReq := string(k.fake.Requests()[1].Body)
	if !strings.Contains(childReq, "Only look things up") || strings.Contains(childReq, `"name":"write"`) || strings.Contains(childReq, `"name":"task"`) {
		t.Fatalf("child request: %.500s", childReq)
	}
	// The snapshot is immutable: editing the definition changes nothing.
	writeFile(t, agentFile, "---\nname: researcher\ntools: write\nmax_turns: 9\n---\nChanged.\n")
	sess, err := k.svc.Session(t.Context(), child.ID)
	if err != nil || sess.Agent == nil || sess.Agent.MaxTurns != 3 || sess.Agent.Tools[0] != "lookup" || !strings.Contains(sess.Agent.Instructions, "Only look") {
		t.Fatalf("snapshot %+v %v", sess.Agent, err)
	}
	// Deleting the parent deletes the child.
	k.mustDo(t, `mutation($s: ID!) { deleteSession(id: $s) }`, map[string]any{"s": sid}, nil)
	if _, err := k.svc.Session(t.Context(), child.ID); err == nil {
		t.Fatal("child survived its parent")
	}
}

func TestStoppingParentStopsChild(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_task", "task", `{"prompt":"work forever"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, hanging())
	k.send(t, sid, "delegate")
	deadline := time.Now().Add(10 * time.Second)
	for len(k.fake.Requests()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	k.mustDo(t, `mutation($s: ID!) { stopTurn(sessionId: $s) { id } }`, map[string]any{"s": sid}, nil)
	if p := w.turnEnd(); p.Status != core.TurnCancelled {
		t.Fatalf("parent %+v", p)
	}
	select {
	case <-k.fake.Cancelled():
	case <-time.After(10 * time.Second):
		t.Fatal("the child's request was not cancelled")
	}
	kids, _ := k.svc.Sessions(t.Context(), core.SessionFilter{ParentID: sid})
	if len(kids) != 1 {
		t.Fatalf("children %d", len(kids))
	}
	time.Sleep(100 * time.Millisecond)
	if kid, _ := k.svc.Session(t.Context(), kids[0].ID); kid.Phase != core.PhaseIdle {
		t.Fatalf("child phase %s", kid.Phase)
	}
}

// The project's rules, memory and skills reach the system prompt.
func TestProjectContextInSystemPrompt(t *testing.T) {
	k := newTestKernel(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".foya", "skills", "release"), 0o755)
	writeFile(t, filepath.Join(dir, "AGENTS.md"), "Always run go vet.\n")
	writeFile(t, filepath.Join(dir, ".foya", "MEMORY.md"), "The staging server is called zebra.\n")
	writeFile(t, filepath.Join(dir, ".foya", "skills", "release", "SKILL.md"), "---\nname: release\ndescription: Cut a release.\n---\nSteps…\n")
	sid := projectSession(t, k, dir)
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.TextStream(testModel, "ok"))
	k.send(t, sid, "hi")
	w.turnEnd()
	system := k.requestMessages(t, 0)[0]["content"].(string)
	for _, want := range []string{"Always run go vet.", "zebra", "- release: Cut a release. (.foya/skills/release/SKILL.md)"} {
		if !strings.Contains(system, want) {
			t.Fatalf("system prompt lacks %q:\n%s", want, system)
		}
	}
	if strings.Contains(system, "Steps…") {
		t.Fatal("a skill's body was sent unasked")
	}
	if msgs := k.messages(t, sid); strings.Contains(msgs[0].Text, "zebra") {
		t.Fatal("the system prompt was stored as history")
	}
}

// approvalEvent is an approval event as a client following a session sees it.
type approvalEvent struct {
	Seq       *int64
	Type      string
	SessionID string
	Approval  *struct {
		RequestID, Tool, Action string
		Decision                *string
		ChildSessionID          *string
	}
}

// followApprovals subscribes to a session's approval events over WebSocket.
func (k *testKernel) followApprovals(t *testing.T, sid string) func() approvalEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c := dialWS(t, ctx, k.srv.URL)
	c.subscribe(ctx, "1", `subscription($id: ID!) { sessionEvents(sessionId: $id, afterSeq: 0) { seq type sessionId approval { requestId tool action decision childSessionId } } }`, map[string]any{"id": sid})
	return func() approvalEvent {
		for {
			m := c.read(ctx)
			var p struct {
				Data struct{ SessionEvents approvalEvent } `json:"data"`
			}
			if err := json.Unmarshal(m.Payload, &p); err != nil || m.Type != "next" {
				t.Fatalf("message %s %s", m.Type, m.Payload)
			}
			if ev := p.Data.SessionEvents; strings.HasPrefix(ev.Type, "approval_") {
				return ev
			}
		}
	}
}

func childOf(t *testing.T, k *testKernel, sid string) string {
	t.Helper()
	kids, err := k.svc.Sessions(t.Context(), core.SessionFilter{ParentID: sid})
	if err != nil || len(kids) != 1 {
		t.Fatalf("children %v %v", kids, err)
	}
	return kids[0].ID
}

func taskThenWrite() []openaitest.Response {
	return []openaitest.Response{{Events: []string{
		chunk(toolCallDelta(0, "c_task", "task", `{"prompt":"write note.txt"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, {Events: []string{
		chunk(toolCallDelta(0, "c_write", "write", `{"path":"note.txt","content":"from the child\n"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}}
}

// Under ASK, a sub-agent's approval shows on the parent's stream with the
// child's id, and a decision sent to the parent unblocks the child.
func TestSubAgentApprovalThroughParent(t *testing.T) {
	k := newTestKernel(t)
	dir := t.TempDir()
	sid := projectSession(t, k, dir)
	k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {approvalMode: ASK}) { id } }`, map[string]any{"s": sid}, nil)
	next := k.followApprovals(t, sid)
	w := k.watch(t, sid)
	k.fake.Enqueue(taskThenWrite()...)
	k.fake.Enqueue(openaitest.TextStream(testModel, "Wrote it."), openaitest.TextStream(testModel, "The sub-agent wrote note.txt."))
	k.send(t, sid, "delegate")
	req := next()
	child := childOf(t, k, sid)
	if req.Type != "approval_requested" || req.SessionID != sid || req.Seq == nil || req.Approval.Tool != "write" || deref(req.Approval.ChildSessionID) != child {
		t.Fatalf("parent sees %+v (child %s)", req, child)
	}
	k.mustDo(t, `mutation($s: ID!, $r: ID!) { resolveApproval(sessionId: $s, requestId: $r, decision: APPROVED) }`, map[string]any{"s": sid, "r": req.Approval.RequestID}, nil)
	if res := next(); res.Type != "approval_resolved" || deref(res.Approval.Decision) != "APPROVED" || deref(res.Approval.ChildSessionID) != child {
		t.Fatalf("parent sees %+v", res)
	}
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("parent turn %+v", p)
	}
	if got := readFile(t, filepath.Join(dir, "note.txt")); got != "from the child\n" {
		t.Fatalf("note.txt %q", got)
	}
	// The child's follow-up request carried the write's result; its own log has both events.
	if body := string(k.fake.Requests()[2].Body); !strings.Contains(body, `"tool_call_id":"c_write"`) || strings.Contains(body, "denied") {
		t.Fatalf("child follow-up: %.400s", body)
	}
	var ev struct{ Events []struct{ Type string } }
	k.mustDo(t, `query($s: ID!) { events(sessionId: $s) { type } }`, map[string]any{"s": child}, &ev)
	n := 0
	for _, e := range ev.Events {
		if strings.HasPrefix(e.Type, "approval_") {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("child log %+v", ev.Events)
	}
	// A second decision, on either session, is a CONFLICT.
	k.mustFail(t, "CONFLICT", `mutation($s: ID!, $r: ID!) { resolveApproval(sessionId: $s, requestId: $r, decision: DENIED) }`, map[string]any{"s": child, "r": req.Approval.RequestID})
}

// An approval still pending when the turn stops ends with approval_resolved
// (CANCELLED), in the child's log and the parent's.
func TestPendingApprovalCancelledOnStop(t *testing.T) {
	k := newTestKernel(t)
	sid := projectSession(t, k, t.TempDir())
	k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {approvalMode: ASK}) { id } }`, map[string]any{"s": sid}, nil)
	next := k.followApprovals(t, sid)
	w := k.watch(t, sid)
	k.fake.Enqueue(taskThenWrite()...)
	k.send(t, sid, "delegate")
	req := next()
	k.mustDo(t, `mutation($s: ID!) { stopTurn(sessionId: $s) { id } }`, map[string]any{"s": sid}, nil)
	res := next()
	if res.Type != "approval_resolved" || deref(res.Approval.Decision) != "CANCELLED" || res.Approval.RequestID != req.Approval.RequestID {
		t.Fatalf("after stop %+v", res)
	}
	if p := w.turnEnd(); p.Status != core.TurnCancelled {
		t.Fatalf("parent turn %+v", p)
	}
	var ev struct{ Events []struct{ Type string } }
	k.mustDo(t, `query($s: ID!) { events(sessionId: $s) { type } }`, map[string]any{"s": childOf(t, k, sid)}, &ev)
	var types []string
	for _, e := range ev.Events {
		if strings.HasPrefix(e.Type, "approval_") {
			types = append(types, e.Type)
		}
	}
	if strings.Join(types, ",") != "approval_requested,approval_resolved" {
		t.Fatalf("child log %v", types)
	}
	k.mustFail(t, "CONFLICT", `mutation($s: ID!, $r: ID!) { resolveApproval(sessionId: $s, requestId: $r, decision: APPROVED) }`, map[string]any{"s": sid, "r": req.Approval.RequestID})
	k.mustFail(t, "BAD_INPUT", `mutation($s: ID!, $r: ID!) { resolveApproval(sessionId: $s, requestId: $r, decision: CANCELLED) }`, map[string]any{"s": sid, "r": "apr_x"})
}

// A sub-agent's question is answered through the parent.
func TestSubAgentQuestionThroughParent(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "ASK")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_task", "task", `{"prompt":"ask the user"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_q", "question", `{"question":"Which colour?"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "Blue it is."), openaitest.TextStream(testModel, "The user chose blue."))
	k.send(t, sid, "delegate")
	var q core.QuestionPayload
	if err := w.next(core.EventQuestionRequested).Decode(&q); err != nil {
		t.Fatal(err)
	}
	if q.ChildSessionID == "" || q.ChildSessionID == sid || q.Question != "Which colour?" {
		t.Fatalf("parent sees %+v", q)
	}
	k.mustDo(t, `mutation($s: ID!, $r: ID!) { answerQuestion(sessionId: $s, requestId: $r, answer: "blue") }`, map[string]any{"s": sid, "r": q.RequestID}, nil)
	var a core.QuestionPayload
	if err := w.next(core.EventQuestionAnswered).Decode(&a); err != nil || a.Answer != "blue" || a.ChildSessionID != q.ChildSessionID {
		t.Fatalf("answer on the parent %+v %v", a, err)
	}
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	if body := string(k.fake.Requests()[2].Body); !strings.Contains(body, `"content":"blue"`) {
		t.Fatalf("the child's follow-up lacks the answer: %.300s", body)
	}
}

// SES-12: an agent without a tools: list (the built-in general agent) gets
// the tool set that existed when its child was created, frozen in the
// child's snapshot (task left out), not "all tools" forever.
func TestSubAgentWithoutToolsListFreezesItsToolSet(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_task", "task", `{"prompt":"say hi"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "hi"), openaitest.TextStream(testModel, "done"))
	k.send(t, sid, "delegate")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("parent turn %+v", p)
	}
	var out struct {
		Session struct {
			Children []struct {
				Agent struct {
					Name  string
					Tools []string
				}
			}
		}
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { children { agent { name tools } } } }`, map[string]any{"s": sid}, &out)
	if len(out.Session.Children) != 1 {
		t.Fatalf("children %+v", out.Session.Children)
	}
	a := out.Session.Children[0].Agent
	for _, want := range []string{"read", "write", "bash", "lookup", "tasks", "question"} {
		if !slices.Contains(a.Tools, want) {
			t.Fatalf("general agent snapshot tools %v lack %s", a.Tools, want)
		}
	}
	if a.Name != "general" || slices.Contains(a.Tools, "task") || !slices.IsSorted(a.Tools) {
		t.Fatalf("snapshot %+v", a)
	}
	// The child's request offered exactly the frozen tools it may use.
	body := string(k.fake.Requests()[1].Body)
	if !strings.Contains(body, `"name":"lookup"`) || strings.Contains(body, `"name":"task"`) {
		t.Fatalf("child request tools: %.400s", body)
	}
}
