package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/foya-dev/foya/client"
)

// session is a Foya session opened on this connection: it follows the
// session's events and turns them into session/update notifications, and
// answers prompts when their turns end.
type session struct {
	a      *Agent
	id     string
	cwd    string
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu        sync.Mutex
	mode      string
	lastSeq   int
	turnsSeen int                  // turn_started events observed
	turns     map[string]*turnInfo // by turn id
	prompts   []*pendingPrompt
	tools     map[string]toolInfo // tool calls seen, by id
	question  string              // request id of a question awaiting the user's next prompt
	// asking holds the permission dialogs open on the client, by approval
	// request id: cancelling one withdraws it ($/cancel_request).
	asking     map[string]context.CancelFunc
	mcp        []string // ids of the MCP servers this connection attached
	textSent   bool     // deltas streamed for the current assistant message
	thoughtSet bool
	refused    bool // the turn's last reply so far is a refusal (stopReason "refusal")
}

type turnInfo struct {
	index       int
	queueItemID string
	claimed     bool
	finished    bool
	status      string
	reason      string
}

type pendingPrompt struct {
	started     bool   // sendMessage started the turn
	queueItemID string // else: the queued item
	after       int    // turnsSeen before sendMessage
	turnID      string
	result      chan turnResult
}

type turnResult struct {
	status, reason string
	err            error
}

type toolInfo struct {
	name  string
	input json.RawMessage
}

func newSession(a *Agent, gs gqlSession, cwd string) *session {
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{a: a, id: gs.ID, cwd: cwd, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		turns: map[string]*turnInfo{}, tools: map[string]toolInfo{}, asking: map[string]context.CancelFunc{}}
	s.mode = modeOf(gs.ApprovalMode, gs.AgentMode)
	return s
}

func (s *session) updateMeta(gs gqlSession) {
	s.mu.Lock()
	s.mode = modeOf(gs.ApprovalMode, gs.AgentMode)
	s.mu.Unlock()
}

func (s *session) stop() {
	s.cancel()
	<-s.done
	s.mu.Lock()
	for _, p := range s.prompts {
		p.result <- turnResult{status: "cancelled"} // session/close cancels its prompts
	}
	s.prompts = nil
	s.mu.Unlock()
}

func (s *session) update(u map[string]any) {
	s.a.conn.notify("session/update", map[string]any{"sessionId": s.id, "update": u})
}

// --- the client's MCP servers ---

func (s *session) setMCP(ids []string) {
	s.mu.Lock()
	s.mcp = ids
	s.mu.Unlock()
}

// attachMCP makes the client's servers the ones this connection attached
// to the session: each is attached (the kernel replaces a server of the
// same name), and those attached before but no longer listed are detached.
func (s *session) attachMCP(ctx context.Context, servers []client.McpServerInput) error {
	var ids []string
	for i, in := range servers {
		r, err := client.ACPAttachSessionMcpServer(ctx, s.a.k, s.id, in)
		if err != nil {
			err = mcpError(err)
			var re *rpcError
			if errors.As(err, &re) {
				re.Message = fmt.Sprintf("mcpServers[%d] (%v): %s", i, in.Name, re.Message)
			}
			return err
		}
		ids = append(ids, r.AttachSessionMcpServer.Id)
	}
	s.mu.Lock()
	old := s.mcp
	s.mcp = ids
	s.mu.Unlock()
	for _, id := range old {
		if !slices.Contains(ids, id) {
			s.detachOne(ctx, id)
		}
	}
	return nil
}

func (s *session) detachOne(ctx context.Context, id string) {
	_, err := client.DetachSessionMcpServer(ctx, s.a.k, s.id, id)
	var ce codedError
	if err != nil && !(errors.As(err, &ce) && ce.GraphQLCode() == "NOT_FOUND") {
		s.a.log.Warn("acp: detach an MCP server", "session_id", s.id, "mcp_server_id", id, "err", err)
	}
}

// detachMCP detaches the servers this connection attached (session/close,
// end of the connection).
func (s *session) detachMCP(ctx context.Context) {
	s.mu.Lock()
	ids := s.mcp
	s.mcp = nil
	s.mu.Unlock()
	for _, id := range ids {
		s.detachOne(ctx, id)
	}
}

// mcpWait bounds how long session/new and session/load wait for the
// client's MCP servers to come up before answering.
const mcpWait = 30 * time.Second

// waitMCP waits until none of this connection's servers is STARTING (or
// mcpWait passes), so that the first prompt sees their tools; a server
// that failed is logged and the session goes on without it.
func (s *session) waitMCP(ctx context.Context) {
	s.mu.Lock()
	n := len(s.mcp)
	s.mu.Unlock()
	if n == 0 {
		return
	}
	deadline := time.Now().Add(mcpWait)
	for {
		r, err := client.ACPSessionMcpServers(ctx, s.a.k, s.id)
		if err != nil || r.Session == nil {
			s.a.log.Warn("acp: read the session's MCP servers", "session_id", s.id, "err", err)
			return
		}
		starting := false
		for _, m := range r.Session.McpServers {
			starting = starting || m.Status == client.McpStatusStarting
		}
		if !starting || time.Now().After(deadline) || ctx.Err() != nil {
			for _, m := range r.Session.McpServers {
				if m.Status != client.McpStatusReady {
					s.a.log.Warn("acp: MCP server not ready; the session goes on without its tools until it is", "session_id", s.id, "mcp_server", m.Name, "status", m.Status, "error", orDefault(deref(m.Error), ""))
				}
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// --- modes ---

// Modes: the approval modes plus plan.
var modes = []map[string]any{
	{"id": "ask", "name": "Ask", "description": "Reads run; file writes and commands ask for permission."},
	{"id": "explore", "name": "Explore", "description": "Read-only: tools that change anything are denied."},
	{"id": "bypass", "name": "Bypass", "description": "Every tool runs without asking."},
	{"id": "plan", "name": "Plan", "description": "The agent plans without changing files, then asks to execute the plan."},
}

func modeOf(approvalMode, agentMode string) string {
	switch lower(agentMode) {
	case "plan", "awaiting_confirmation":
		return "plan"
	}
	if m := lower(approvalMode); m != "" {
		return m
	}
	return "ask"
}

func (s *session) modeState() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"currentModeId": s.mode, "availableModes": modes}
}

func (s *session) setMode(ctx context.Context, id string) error {
	var in client.UpdateSessionInput
	switch id {
	case "ask", "explore", "bypass":
		am, ag := client.ApprovalMode(strings.ToUpper(id)), client.AgentModeExecute
		in.ApprovalMode, in.AgentMode = &am, &ag
	case "plan":
		ag := client.AgentModePlan
		in.AgentMode = &ag
	default:
		return invalidParams("unknown mode %q: use ask, explore, bypass or plan", id)
	}
	r, err := client.ACPUpdateSession(ctx, s.a.k, s.id, in)
	if err != nil {
		return kernelError(err)
	}
	s.mu.Lock()
	s.mode = modeOf(string(r.UpdateSession.ApprovalMode), string(r.UpdateSession.AgentMode))
	s.mu.Unlock()
	return nil
}

// --- events ---

type gqlEvent struct {
	Seq      *int
	Type     string
	Delta    *string
	Payload  json.RawMessage
	Message  *gqlMessage
	Approval *struct {
		RequestID, ToolCallID, Tool, Action, Summary string
		Input                                        json.RawMessage
	}
}

type gqlMessage struct {
	Seq       int
	Role      string
	Text      string
	Reasoning *string
	ToolCalls []struct {
		ID, Name string
		Input    json.RawMessage
	}
	ToolCallID  *string
	ToolName    *string
	IsError     bool
	Diff        *string
	FileChanges []struct{ Path, Action string }
	Attachments []struct{ Name, MediaType string }
	// FinishReason and Refusal: see acp/refusal.go.
	FinishReason, Refusal *string
}

// fromMessage is what the agent keeps of a message read with ACPMessageFields.
func fromMessage(f *client.ACPMessageFields) gqlMessage {
	m := gqlMessage{Seq: f.Seq, Role: string(f.Role), Text: f.Text, Reasoning: f.Reasoning,
		ToolCallID: f.ToolCallId, ToolName: f.ToolName, IsError: f.IsError, Diff: f.Diff,
		FinishReason: f.FinishReason, Refusal: f.Refusal}
	for _, tc := range f.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, struct {
			ID, Name string
			Input    json.RawMessage
		}{tc.Id, tc.Name, tc.Input})
	}
	for _, fc := range f.FileChanges {
		m.FileChanges = append(m.FileChanges, struct{ Path, Action string }{fc.Path, string(fc.Action)})
	}
	for _, at := range f.Attachments {
		m.Attachments = append(m.Attachments, struct{ Name, MediaType string }{at.Name, at.MediaType})
	}
	return m
}

// fromEvent is what the agent keeps of a sessionEvents event.
func fromEvent(e *client.ACPSessionEventsSessionEventsSessionEvent) gqlEvent {
	ev := gqlEvent{Seq: e.Seq, Type: e.Type, Delta: e.Delta}
	if e.Payload != nil {
		ev.Payload = *e.Payload
	}
	if e.Message != nil {
		m := fromMessage(&e.Message.ACPMessageFields)
		ev.Message = &m
	}
	if ap := e.Approval; ap != nil {
		ev.Approval = &struct {
			RequestID, ToolCallID, Tool, Action, Summary string
			Input                                        json.RawMessage
		}{RequestID: ap.RequestId, ToolCallID: ap.ToolCallId, Tool: ap.Tool, Action: ap.Action, Summary: ap.Summary}
		if ap.Input != nil {
			ev.Approval.Input = *ap.Input
		}
	}
	return ev
}

// start follows the session's events after seq, resubscribing after a
// dropped stream, until stop.
func (s *session) start(after int) {
	s.lastSeq = after
	go func() {
		defer close(s.done)
		backoff := 100 * time.Millisecond
		for s.ctx.Err() == nil {
			s.mu.Lock()
			from := s.lastSeq
			s.mu.Unlock()
			st, err := client.Subscribe[json.RawMessage](s.ctx, s.a.k, client.ACPSessionEvents_Operation,
				map[string]any{"sessionId": s.id, "afterSeq": from})
			if err == nil {
				backoff = 100 * time.Millisecond
				for raw := range st.Events {
					var w client.ACPSessionEventsResponse
					if err := json.Unmarshal(raw.Raw, &w); err != nil {
						s.a.log.Warn("acp: decode session event", "err", err)
						continue
					}
					ev := fromEvent(&w.SessionEvents)
					if w.SessionEvents.MessageTruncated {
						s.wholeMessage(&ev, w.SessionEvents.Message)
					}
					if ev.Seq != nil {
						s.mu.Lock()
						s.lastSeq = *ev.Seq
						s.mu.Unlock()
					}
					if s.event(ev) {
						st.Close()
						return
					}
				}
				err = st.Err()
				st.Close()
			}
			if s.ctx.Err() != nil {
				return
			}
			s.a.log.Warn("acp: session event stream ended; resubscribing", "session_id", s.id, "err", err)
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 5*time.Second)
		}
	}()
}

// event handles one event; true ends the stream (session deleted).
func (s *session) event(ev gqlEvent) bool {
	s.a.log.Debug("acp: session event", "session_id", s.id, "type", ev.Type)
	switch ev.Type {
	case "message_delta":
		if ev.Delta != nil && *ev.Delta != "" {
			s.mu.Lock()
			s.textSent = true
			s.mu.Unlock()
			s.update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": textBlock(*ev.Delta)})
		}
	case "reasoning_delta":
		if ev.Delta != nil && *ev.Delta != "" {
			s.mu.Lock()
			s.thoughtSet = true
			s.mu.Unlock()
			s.update(map[string]any{"sessionUpdate": "agent_thought_chunk", "content": textBlock(*ev.Delta)})
		}
	case "message_end":
		if m := ev.Message; m != nil {
			s.mu.Lock()
			text, thought := s.textSent, s.thoughtSet
			s.textSent, s.thoughtSet = false, false
			s.mu.Unlock()
			s.message(*m, !text, !thought, false)
			s.noteRefusal(*m)
		}
	case "tool_started":
		var p struct{ ToolCallID string }
		_ = json.Unmarshal(ev.Payload, &p)
		if p.ToolCallID != "" {
			s.update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": p.ToolCallID, "status": "in_progress"})
		}
	case "approval_requested":
		if ap := ev.Approval; ap != nil {
			// Registered before the dialog goes out, so that a decision
			// made elsewhere right after withdraws it.
			ctx, withdraw := context.WithCancel(s.ctx)
			s.mu.Lock()
			s.asking[ap.RequestID] = withdraw
			s.mu.Unlock()
			go s.requestPermission(ctx, withdraw, ap.RequestID, ap.ToolCallID, ap.Tool, ap.Summary, ap.Input)
		}
	case "approval_resolved":
		// Decided elsewhere (another client, a stopped turn, this
		// connection's own answer): withdraw a dialog still open.
		var p struct{ RequestID string }
		_ = json.Unmarshal(ev.Payload, &p)
		if ev.Approval != nil && p.RequestID == "" {
			p.RequestID = ev.Approval.RequestID
		}
		s.mu.Lock()
		withdraw := s.asking[p.RequestID]
		delete(s.asking, p.RequestID)
		s.mu.Unlock()
		if withdraw != nil {
			s.a.log.Info("acp: approval decided elsewhere; withdrawing the permission request", "session_id", s.id, "request_id", p.RequestID)
			withdraw()
		}
	case "question_requested":
		var q struct{ RequestID, Question string }
		_ = json.Unmarshal(ev.Payload, &q)
		s.mu.Lock()
		s.question = q.RequestID
		s.mu.Unlock()
		s.update(map[string]any{"sessionUpdate": "agent_message_chunk",
			"content": textBlock("\n\n**Question:** " + q.Question + "\n\n_(Your next message answers it.)_\n")})
	case "question_answered":
		s.mu.Lock()
		s.question = ""
		s.mu.Unlock()
	case "turn_started":
		var p struct{ TurnID, QueueItemID string }
		_ = json.Unmarshal(ev.Payload, &p)
		s.turnStarted(p.TurnID, p.QueueItemID)
	case "turn_finished":
		var p struct{ TurnID, Status, Reason string }
		_ = json.Unmarshal(ev.Payload, &p)
		s.turnFinished(p.TurnID, p.Status, p.Reason)
	case "session_updated":
		var p struct {
			Session struct {
				ApprovalMode, AgentMode string
				Tasks                   []gqlTask
			}
			Changed []string
		}
		_ = json.Unmarshal(ev.Payload, &p)
		mode := modeOf(p.Session.ApprovalMode, p.Session.AgentMode)
		s.mu.Lock()
		changed := mode != s.mode
		s.mode = mode
		s.mu.Unlock()
		if changed {
			s.update(map[string]any{"sessionUpdate": "current_mode_update", "currentModeId": mode})
		}
		for _, c := range p.Changed {
			if c == "tasks" {
				s.sendPlan(p.Session.Tasks)
			}
		}
	case "session_deleted":
		s.failAll(errors.New("the session was deleted"))
		return true
	}
	return false
}

// message sends a complete message: on replay, or to complete what deltas
// did not stream (withText, withThought).
func (s *session) message(m gqlMessage, withText, withThought, replay bool) {
	switch lower(m.Role) {
	case "user":
		if !replay {
			return // the client shows its own prompts
		}
		if m.Text != "" {
			s.update(map[string]any{"sessionUpdate": "user_message_chunk", "content": textBlock(m.Text)})
		}
		for _, at := range m.Attachments {
			s.update(map[string]any{"sessionUpdate": "user_message_chunk",
				"content": map[string]any{"type": "resource_link", "name": at.Name, "uri": "foya-attachment:" + url.PathEscape(at.Name), "mimeType": at.MediaType}})
		}
	case "assistant":
		if withThought && m.Reasoning != nil && *m.Reasoning != "" {
			s.update(map[string]any{"sessionUpdate": "agent_thought_chunk", "content": textBlock(*m.Reasoning)})
		}
		if withText && m.Text != "" {
			s.update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": textBlock(m.Text)})
		}
		for _, tc := range m.ToolCalls {
			s.mu.Lock()
			s.tools[tc.ID] = toolInfo{name: tc.Name, input: tc.Input}
			s.mu.Unlock()
			u := s.toolCall(tc.ID, tc.Name, tc.Input)
			u["sessionUpdate"] = "tool_call"
			u["status"] = "pending"
			s.update(u)
		}
	case "tool":
		if m.ToolCallID == nil {
			return
		}
		s.mu.Lock()
		ti := s.tools[*m.ToolCallID]
		s.mu.Unlock()
		status := "completed"
		if m.IsError {
			status = "failed"
		}
		u := map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": *m.ToolCallID, "status": status,
			"content": s.toolContent(m, ti)}
		if m.Text != "" {
			u["rawOutput"] = map[string]any{"output": m.Text, "isError": m.IsError}
		}
		s.update(u)
	}
}

// replay sends the history as session/update notifications.
func (s *session) replay(msgs []gqlMessage) {
	for _, m := range msgs {
		s.message(m, true, true, true)
	}
}

// toolCall is the ToolCall fields of a call: title, kind, locations, raw input.
func (s *session) toolCall(id, name string, input json.RawMessage) map[string]any {
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	str := func(k string) string { v, _ := in[k].(string); return v }
	title := name
	var locs []map[string]any
	if p := str("path"); p != "" {
		abs := s.abs(p)
		locs = append(locs, map[string]any{"path": abs})
		title = name + " " + p
	}
	switch name {
	case "bash":
		title = "bash: " + firstLine(str("command"), 120)
	case "grep", "glob":
		title = name + " " + str("pattern")
	case "web_search":
		title = "web search: " + firstLine(str("query"), 120)
	case "question":
		title = "question: " + firstLine(str("question"), 120)
	case "tasks":
		title = "update the task list"
	case "task":
		title = "sub-agent: " + firstLine(str("description")+str("prompt"), 120)
	}
	u := map[string]any{"toolCallId": id, "title": title, "kind": toolKind(name)}
	if locs != nil {
		u["locations"] = locs
	}
	if len(input) > 0 && string(input) != "null" {
		u["rawInput"] = input
	}
	return u
}

// toolKind maps a Foya tool to an ACP tool kind.
func toolKind(name string) string {
	switch name {
	case "read", "read_tool_result":
		return "read"
	case "edit", "write":
		return "edit"
	case "bash":
		return "execute"
	case "grep", "glob":
		return "search"
	case "web_search":
		return "fetch"
	case "tasks", "task":
		return "think"
	}
	return "other"
}

// toolContent is a tool result's content: its text and a diff per changed file.
func (s *session) toolContent(m gqlMessage, ti toolInfo) []map[string]any {
	var out []map[string]any
	diffs := map[string]bool{}
	if m.Diff != nil && *m.Diff != "" {
		for _, d := range parseUnifiedDiff(*m.Diff) {
			entry := map[string]any{"type": "diff", "path": s.abs(d.path), "newText": d.newText}
			if d.created {
				entry["oldText"] = nil
			} else {
				entry["oldText"] = d.oldText
			}
			out = append(out, entry)
			diffs[s.abs(d.path)] = true
		}
	}
	if ti.name == "edit" && len(m.FileChanges) > 0 && !m.IsError {
		var in struct {
			Path      string `json:"path"`
			OldString string `json:"old_string"`
			NewString string `json:"new_string"`
		}
		if json.Unmarshal(ti.input, &in) == nil && in.Path != "" && !diffs[s.abs(in.Path)] {
			out = append(out, map[string]any{"type": "diff", "path": s.abs(in.Path), "oldText": in.OldString, "newText": in.NewString})
		}
	}
	if m.Text != "" {
		out = append(out, map[string]any{"type": "content", "content": textBlock(m.Text)})
	}
	if out == nil {
		out = []map[string]any{}
	}
	return out
}

func (s *session) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(s.cwd, p)
}

func (s *session) sendPlan(tasks []gqlTask) {
	entries := make([]map[string]any, 0, len(tasks))
	for _, t := range tasks {
		st := "pending"
		switch lower(t.Status) {
		case "in_progress":
			st = "in_progress"
		case "done":
			st = "completed"
		}
		entries = append(entries, map[string]any{"content": t.Text, "priority": "medium", "status": st})
	}
	s.update(map[string]any{"sessionUpdate": "plan", "entries": entries})
}

// --- permissions ---

func (s *session) requestPermission(ctx context.Context, withdraw context.CancelFunc, requestID, toolCallID, tool, summary string, input json.RawMessage) {
	defer withdraw()
	tc := s.toolCall(toolCallID, tool, input)
	if summary != "" {
		tc["title"] = firstLine(summary, 200)
	}
	tc["status"] = "pending"
	var res struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	if ctx.Err() != nil {
		return // decided before the dialog went out
	}
	err := s.a.conn.call(ctx, "session/request_permission", map[string]any{
		"sessionId": s.id,
		"toolCall":  tc,
		"options": []map[string]any{
			{"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
			{"optionId": "allow_always", "name": "Allow for this session", "kind": "allow_always"},
			{"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
		},
	}, &res)
	s.mu.Lock()
	_, open := s.asking[requestID]
	delete(s.asking, requestID)
	s.mu.Unlock()
	if !open || s.ctx.Err() != nil {
		return // withdrawn: decided elsewhere, or the session was closed
	}
	decision := client.ApprovalDecisionDenied
	if err != nil {
		s.a.log.Warn("acp: permission request failed; denying", "session_id", s.id, "tool", tool, "err", err)
	} else if res.Outcome.Outcome == "selected" {
		switch res.Outcome.OptionID {
		case "allow_once":
			decision = client.ApprovalDecisionApproved
		case "allow_always":
			decision = client.ApprovalDecisionApprovedForSession
		}
	}
	rctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	_, err = client.ResolveApproval(rctx, s.a.k, s.id, requestID, decision)
	var ce codedError
	if err != nil && !(errors.As(err, &ce) && ce.GraphQLCode() == "CONFLICT") {
		s.a.log.Warn("acp: resolve approval", "session_id", s.id, "err", err)
	}
}

// pendingScan bounds how far back reopenPending looks for open requests.
const pendingScan = 2000

// reopenPending asks again what a running turn is waiting for when a
// session is loaded or resumed: approvals become permission dialogs, a
// question is shown again. It reads the last pendingScan events up to
// head, the window a turn's open requests are in.
func (s *session) reopenPending(ctx context.Context, head int) {
	after, limit := max(0, head-pendingScan), pendingScan
	r, err := client.ACPEvents(ctx, s.a.k, s.id, &after, &limit)
	if err != nil {
		s.a.log.Warn("acp: read the running turn's open requests", "session_id", s.id, "err", err)
		return
	}
	type req struct {
		RequestID, ToolCallID, Tool, Summary, Question string
		Input                                          json.RawMessage
	}
	var order []string
	open := map[string]req{}
	kinds := map[string]string{}
	for _, e := range r.Events {
		var p req
		if e.Payload != nil {
			_ = json.Unmarshal(*e.Payload, &p)
		}
		switch e.Type {
		case "approval_requested", "question_requested":
			if _, seen := open[p.RequestID]; !seen {
				order = append(order, p.RequestID)
			}
			open[p.RequestID], kinds[p.RequestID] = p, e.Type
		case "approval_resolved", "question_answered", "turn_finished":
			if e.Type == "turn_finished" {
				open = map[string]req{}
			}
			delete(open, p.RequestID)
		}
	}
	for _, id := range order {
		p, ok := open[id]
		if !ok {
			continue
		}
		ev := gqlEvent{Type: kinds[id], Payload: mustJSON(map[string]any{"requestId": p.RequestID, "question": p.Question})}
		if kinds[id] == "approval_requested" {
			ev.Approval = &struct {
				RequestID, ToolCallID, Tool, Action, Summary string
				Input                                        json.RawMessage
			}{RequestID: p.RequestID, ToolCallID: p.ToolCallID, Tool: p.Tool, Summary: p.Summary, Input: p.Input}
		}
		s.a.log.Info("acp: the running turn waits for an answer; asking again", "session_id", s.id, "request_id", id, "kind", kinds[id])
		s.event(ev)
	}
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// --- prompts and turns ---

func (s *session) prompt(ctx context.Context, blocks []json.RawMessage) (any, error) {
	text, attachments, err := s.input(ctx, blocks)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	question := s.question
	s.mu.Unlock()
	if question != "" && len(attachments) == 0 {
		// A pending question: this prompt is its answer. It answers when
		// the running turn ends.
		_, err := client.AnswerQuestion(ctx, s.a.k, s.id, question, text)
		var ce codedError
		if err == nil {
			s.mu.Lock()
			s.question = ""
			s.mu.Unlock()
			return s.waitRunning(ctx)
		}
		if !(errors.As(err, &ce) && ce.GraphQLCode() == "CONFLICT") {
			return nil, kernelError(err)
		}
	}
	in := client.UserInput{Text: &text}
	if len(attachments) > 0 {
		in.AttachmentIds = attachments
	}
	s.mu.Lock()
	after := s.turnsSeen
	s.mu.Unlock()
	r, err := client.ACPSendMessage(ctx, s.a.k, s.id, in)
	if err != nil {
		return nil, kernelError(err)
	}
	p := &pendingPrompt{started: r.SendMessage.TurnStarted, after: after, result: make(chan turnResult, 1)}
	if q := r.SendMessage.QueueItem; q != nil {
		p.queueItemID = q.Id
	}
	s.a.log.Debug("acp: prompt sent", "session_id", s.id, "started", p.started, "queue_item", p.queueItemID)
	s.register(p)
	return s.wait(ctx, p)
}

// waitRunning answers when the running turn ends (a prompt that answered a question).
func (s *session) waitRunning(ctx context.Context) (any, error) {
	p := &pendingPrompt{result: make(chan turnResult, 1)}
	s.mu.Lock()
	var latest string
	best := -1
	for id, t := range s.turns {
		if !t.finished && t.index > best {
			latest, best = id, t.index
		}
	}
	if latest == "" {
		s.mu.Unlock()
		return map[string]any{"stopReason": "end_turn"}, nil
	}
	p.turnID = latest
	s.prompts = append(s.prompts, p)
	s.mu.Unlock()
	return s.wait(ctx, p)
}

func (s *session) wait(ctx context.Context, p *pendingPrompt) (any, error) {
	select {
	case r := <-p.result:
		if r.err != nil {
			return nil, &rpcError{Code: codeInternalError, Message: r.err.Error()}
		}
		switch r.status {
		case "completed":
			return map[string]any{"stopReason": "end_turn"}, nil
		case "refused":
			return map[string]any{"stopReason": "refusal"}, nil
		case "cancelled":
			return map[string]any{"stopReason": "cancelled"}, nil
		}
		if strings.Contains(r.reason, "max-steps guard") {
			return map[string]any{"stopReason": "max_turn_requests"}, nil
		}
		return nil, &rpcError{Code: codeInternalError, Message: "turn failed: " + orDefault(r.reason, "no reason given")}
	case <-ctx.Done():
		s.mu.Lock()
		s.removePrompt(p)
		s.mu.Unlock()
		return nil, ctx.Err()
	}
}

// register binds a prompt to its turn when that already started (events can
// overtake the sendMessage response).
func (s *session) register(p *pendingPrompt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var id string
	var t *turnInfo
	for tid, ti := range s.turns {
		if ti.claimed || ti.index <= p.after {
			continue
		}
		// The kernel starts even an immediate turn through its queue, so a
		// started prompt's turn is the first one after it was sent.
		if (p.queueItemID != "" && ti.queueItemID == p.queueItemID) || p.started {
			if t == nil || ti.index < t.index {
				id, t = tid, ti
			}
		}
	}
	if t != nil {
		t.claimed = true
		p.turnID = id
		if t.finished {
			p.result <- turnResult{status: t.status, reason: t.reason}
			return
		}
	}
	s.prompts = append(s.prompts, p)
}

func (s *session) turnStarted(id, queueItemID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turnsSeen++
	ti := &turnInfo{index: s.turnsSeen, queueItemID: queueItemID}
	s.turns[id] = ti
	var match *pendingPrompt
	for _, p := range s.prompts {
		if p.turnID == "" && queueItemID != "" && p.queueItemID == queueItemID {
			match = p
			break
		}
	}
	if match == nil {
		for _, p := range s.prompts {
			if p.turnID == "" && p.started {
				match = p
				break
			}
		}
	}
	if match != nil {
		match.turnID, ti.claimed = id, true
	}
	// Forget old finished turns.
	for tid, t := range s.turns {
		if t.finished && t.index < s.turnsSeen-64 {
			delete(s.turns, tid)
		}
	}
}

func (s *session) turnFinished(id, status, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ti := s.turns[id]; ti != nil {
		if status == "completed" && s.refused {
			status = "refused"
		}
		ti.finished, ti.status, ti.reason = true, status, reason
	}
	if status == "completed" && s.refused {
		status = "refused"
	}
	s.refused = false
	keep := s.prompts[:0]
	for _, p := range s.prompts {
		if p.turnID == id {
			p.result <- turnResult{status: status, reason: reason}
			continue
		}
		keep = append(keep, p)
	}
	s.prompts = keep
	s.question = ""
}

func (s *session) removePrompt(p *pendingPrompt) {
	keep := s.prompts[:0]
	for _, q := range s.prompts {
		if q != p {
			keep = append(keep, q)
		}
	}
	s.prompts = keep
}

func (s *session) failAll(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prompts {
		p.result <- turnResult{err: err}
	}
	s.prompts = nil
}

// cancelTurn stops the running turn and drops this connection's queued
// prompts (they answer cancelled); other clients' queued input stays.
func (s *session) cancelTurn(ctx context.Context) error {
	s.mu.Lock()
	var queued []*pendingPrompt
	running := false
	for _, p := range s.prompts {
		if p.turnID == "" && p.queueItemID != "" {
			queued = append(queued, p)
		} else {
			running = true
		}
	}
	for _, t := range s.turns {
		if !t.finished {
			running = true
		}
	}
	s.mu.Unlock()
	for _, p := range queued {
		_, err := client.DeleteQueuedMessage(ctx, s.a.k, s.id, p.queueItemID)
		s.mu.Lock()
		if err == nil && p.turnID == "" {
			s.removePrompt(p)
			p.result <- turnResult{status: "cancelled"}
		}
		s.mu.Unlock()
	}
	if !running {
		return nil
	}
	if _, err := client.StopTurn(ctx, s.a.k, s.id); err != nil {
		var ce codedError
		if errors.As(err, &ce) && ce.GraphQLCode() == "CONFLICT" {
			return nil // nothing was running
		}
		return kernelError(err)
	}
	return nil
}

// input turns prompt content blocks into the message text and attachments.
func (s *session) input(ctx context.Context, blocks []json.RawMessage) (string, []string, error) {
	var text []string
	var ids []string
	for i, raw := range blocks {
		var b struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
			URI      string `json:"uri"`
			Name     string `json:"name"`
			Title    string `json:"title"`
			Resource *struct {
				URI      string  `json:"uri"`
				Text     *string `json:"text"`
				Blob     *string `json:"blob"`
				MimeType string  `json:"mimeType"`
			} `json:"resource"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return "", nil, invalidParams("prompt[%d]: %v", i, err)
		}
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "resource_link":
			name := orDefault(b.Title, b.Name)
			text = append(text, fmt.Sprintf("[%s](%s)", orDefault(name, b.URI), b.URI))
		case "resource":
			if b.Resource == nil {
				return "", nil, invalidParams("prompt[%d]: resource is missing", i)
			}
			r := b.Resource
			switch {
			case r.Text != nil:
				text = append(text, fmt.Sprintf("<context uri=%q>\n%s\n</context>", r.URI, *r.Text))
			case r.Blob != nil:
				data, err := base64.StdEncoding.DecodeString(*r.Blob)
				if err != nil {
					return "", nil, invalidParams("prompt[%d]: blob is not base64: %v", i, err)
				}
				id, err := s.a.k.Upload(ctx, nameOf(r.URI, "attachment"), orDefault(r.MimeType, "application/octet-stream"), data)
				if err != nil {
					return "", nil, kernelError(err)
				}
				ids = append(ids, id)
			default:
				return "", nil, invalidParams("prompt[%d]: resource has neither text nor blob", i)
			}
		case "image":
			data, err := base64.StdEncoding.DecodeString(b.Data)
			if err != nil {
				return "", nil, invalidParams("prompt[%d]: image data is not base64: %v", i, err)
			}
			name := nameOf(b.URI, "image"+extOf(b.MimeType))
			id, err := s.a.k.Upload(ctx, name, b.MimeType, data)
			if err != nil {
				return "", nil, kernelError(err)
			}
			ids = append(ids, id)
		case "audio":
			return "", nil, invalidParams("prompt[%d]: audio is not supported (promptCapabilities.audio is false)", i)
		default:
			return "", nil, invalidParams("prompt[%d]: unknown content type %q", i, b.Type)
		}
	}
	joined := strings.Join(text, "\n\n")
	if strings.TrimSpace(joined) == "" && len(ids) == 0 {
		return "", nil, invalidParams("the prompt is empty")
	}
	return joined, ids, nil
}

func nameOf(uri, def string) string {
	if uri == "" {
		return def
	}
	if u, err := url.Parse(uri); err == nil && u.Path != "" {
		if b := path.Base(u.Path); b != "" && b != "/" && b != "." {
			return b
		}
	}
	return def
}

func extOf(mime string) string {
	switch mime {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ""
}

func textBlock(t string) map[string]any { return map[string]any{"type": "text", "text": t} }

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
