package acp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/foya-dev/foya/client"
)

// The session's events, followed over the kernel's sessionEvents
// subscription and turned into session/update notifications.

// gqlEvent is what the agent keeps of a session event.
type gqlEvent struct {
	Seq      *int
	Type     string
	Delta    *string
	Payload  json.RawMessage
	Message  *gqlMessage
	Approval *gqlApproval
	// Guardian is the verdict of guardian_verdict (GUARDED sessions).
	Guardian *client.GuardianVerdictFields
	// Terminal and TerminalOutput are those of the terminal_* events.
	Terminal       *client.TerminalFields
	TerminalOutput *client.ACPSessionEventsSessionEventsSessionEventTerminalOutputTerminalChunk
}

// gqlApproval is an approval_requested event's request.
type gqlApproval struct {
	RequestID, ToolCallID, Tool, Action, Summary string
	Input                                        json.RawMessage
}

// gqlMessage is what the agent keeps of a message.
type gqlMessage struct {
	Seq         int
	Role        string
	Text        string
	Reasoning   *string
	ToolCalls   []gqlToolCall
	ToolCallID  *string
	ToolName    *string
	IsError     bool
	Diff        *string
	FileChanges []gqlFileChange
	Attachments []gqlAttachment
	// FinishReason and Refusal: see acp/refusal.go.
	FinishReason, Refusal *string
}

type gqlToolCall struct {
	ID, Name string
	Input    json.RawMessage
}

type gqlFileChange struct{ Path, Action string }

type gqlAttachment struct {
	ID, Name, MediaType string
	Size                int
}

// The payloads of the kernel's events the agent reads (JSON as the kernel
// writes them).
type (
	toolStartedPayload struct {
		ToolCallID string `json:"toolCallId"`
	}
	// requestPayload is the payload of approval_requested,
	// approval_resolved, question_requested and question_answered.
	requestPayload struct {
		RequestID  string          `json:"requestId"`
		ToolCallID string          `json:"toolCallId"`
		Tool       string          `json:"tool"`
		Summary    string          `json:"summary"`
		Question   string          `json:"question"`
		Input      json.RawMessage `json:"input"`
		// Elicitation is set when an MCP server asks (question_requested).
		Elicitation *struct {
			Server string `json:"server"`
			Mode   string `json:"mode"`
			URL    string `json:"url"`
		} `json:"elicitation"`
	}
	turnStartedPayload struct {
		TurnID      string `json:"turnId"`
		QueueItemID string `json:"queueItemId"`
	}
	turnFinishedPayload struct {
		TurnID string `json:"turnId"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	}
	sessionUpdatedPayload struct {
		Session struct {
			ApprovalMode string    `json:"approvalMode"`
			AgentMode    string    `json:"agentMode"`
			Tasks        []gqlTask `json:"tasks"`
		} `json:"session"`
		Changed []string `json:"changed"`
	}
)

// fromMessage is what the agent keeps of a message read with ACPMessageFields.
func fromMessage(f *client.ACPMessageFields) gqlMessage {
	m := gqlMessage{Seq: f.Seq, Role: string(f.Role), Text: f.Text, Reasoning: f.Reasoning,
		ToolCallID: f.ToolCallId, ToolName: f.ToolName, IsError: f.IsError, Diff: f.Diff,
		FinishReason: f.FinishReason, Refusal: f.Refusal}
	for _, tc := range f.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, gqlToolCall{tc.Id, tc.Name, tc.Input})
	}
	for _, fc := range f.FileChanges {
		m.FileChanges = append(m.FileChanges, gqlFileChange{fc.Path, string(fc.Action)})
	}
	for _, at := range f.Attachments {
		m.Attachments = append(m.Attachments, gqlAttachment{at.Id, at.Name, at.MediaType, at.Size})
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
		ev.Approval = &gqlApproval{RequestID: ap.RequestId, ToolCallID: ap.ToolCallId, Tool: ap.Tool, Action: ap.Action, Summary: ap.Summary}
		if ap.Input != nil {
			ev.Approval.Input = *ap.Input
		}
	}
	if g := e.GuardianVerdict; g != nil {
		ev.Guardian = &g.GuardianVerdictFields
	}
	if tm := e.Terminal; tm != nil {
		ev.Terminal = &tm.TerminalFields
	}
	ev.TerminalOutput = e.TerminalOutput
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
			subscribed, deleted, err := s.follow()
			if deleted || s.ctx.Err() != nil {
				return
			}
			if subscribed {
				backoff = 100 * time.Millisecond
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

// follow subscribes to the session's events after the last one seen and
// handles them until the stream ends (err says why) or the session is
// deleted.
func (s *session) follow() (subscribed, deleted bool, err error) {
	s.mu.Lock()
	from := s.lastSeq
	s.mu.Unlock()
	st, err := client.Subscribe[json.RawMessage](s.ctx, s.a.k, client.ACPSessionEvents_Operation,
		map[string]any{"sessionId": s.id, "afterSeq": from})
	if err != nil {
		return false, false, err
	}
	defer st.Close()
	for raw := range st.Events {
		var w client.ACPSessionEventsResponse
		if err := json.Unmarshal(raw.Raw, &w); err != nil {
			s.a.log.Warn("acp: decode session event", "session_id", s.id, "err", err)
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
			return true, true, nil
		}
	}
	return true, false, st.Err()
}

// payload decodes an event's payload into v. The kernel's payloads always
// fit: an error is logged and the event goes on with what decoded.
func (s *session) payload(ev gqlEvent, v any) {
	if len(ev.Payload) == 0 {
		return
	}
	if err := json.Unmarshal(ev.Payload, v); err != nil {
		s.a.log.Warn("acp: decode an event's payload", "session_id", s.id, "type", ev.Type, "err", err)
	}
}

// event handles one event; true ends the stream (session deleted).
func (s *session) event(ev gqlEvent) bool {
	s.a.log.Debug("acp: session event", "session_id", s.id, "type", ev.Type)
	switch ev.Type {
	case "message_delta":
		s.delta(ev.Delta, "agent_message_chunk", &s.textSent)
	case "reasoning_delta":
		s.delta(ev.Delta, "agent_thought_chunk", &s.thoughtSet)
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
		var p toolStartedPayload
		s.payload(ev, &p)
		if p.ToolCallID != "" {
			s.update(toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: p.ToolCallID, Status: "in_progress"})
		}
	case "guardian_verdict":
		// The guardian's verdict is shown on the tool call (GUARDED): its
		// content until the result replaces it.
		if g := ev.Guardian; g != nil && g.ToolCallId != "" {
			s.update(toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: g.ToolCallId, Status: "in_progress",
				Content: []toolCallContent{wrappedContent{Type: "content", Content: textBlock(guardianLine(*g))}}})
		}
	case "approval_requested":
		s.approvalRequested(ev.Approval)
	case "approval_resolved":
		s.approvalResolved(ev)
	case "question_requested":
		var q requestPayload
		s.payload(ev, &q)
		s.questionRequested(q)
	case "question_answered":
		s.mu.Lock()
		s.question = ""
		s.mu.Unlock()
	case "turn_started":
		var p turnStartedPayload
		s.payload(ev, &p)
		s.turnStarted(p.TurnID, p.QueueItemID)
	case "turn_finished":
		var p turnFinishedPayload
		s.payload(ev, &p)
		answeredWait(s.turnFinished(p.TurnID, p.Status, p.Reason))
	case "terminal_started", "terminal_output", "terminal_exited":
		s.terminalEvent(ev)
	case "route_fallback":
		if note := fallbackNotice(ev.Payload); note != "" {
			s.chunk("agent_message_chunk", textBlock(note))
		}
	case "session_updated":
		s.sessionUpdated(ev)
	case "session_deleted":
		s.failAll(errors.New("the session was deleted"))
		return true
	}
	return false
}

// delta streams a text or reasoning delta as a chunk of kind and notes in
// *sent that the current message streamed.
func (s *session) delta(d *string, kind string, sent *bool) {
	if d == nil || *d == "" {
		return
	}
	s.mu.Lock()
	*sent = true
	s.mu.Unlock()
	s.chunk(kind, textBlock(*d))
}

// approvalRequested opens a permission dialog on the client.
func (s *session) approvalRequested(ap *gqlApproval) {
	if ap == nil {
		return
	}
	// Registered before the dialog goes out, so that a decision made
	// elsewhere right after withdraws it.
	ctx, withdraw := context.WithCancel(s.ctx)
	s.mu.Lock()
	s.asking[ap.RequestID] = withdraw
	s.mu.Unlock()
	go s.requestPermission(ctx, withdraw, ap.RequestID, ap.ToolCallID, ap.Tool, ap.Summary, ap.Input)
}

// questionRequested shows the model's question; the user's next prompt
// answers it.
func (s *session) questionRequested(q requestPayload) {
	s.mu.Lock()
	s.question = q.RequestID
	s.mu.Unlock()
	hint := "_(Your next message answers it.)_"
	if e := q.Elicitation; e != nil {
		// A server's question can be refused: /decline or /cancel.
		hint = "_(Your next message answers it: a JSON object of the fields, or the value for one field; " +
			"/decline or /cancel refuse.)_"
		if e.Mode == "url" && e.URL != "" {
			hint = "[Open the page](" + e.URL + ")\n\n_(Reply anything once done there; /decline or /cancel refuse.)_"
		}
	}
	s.chunk("agent_message_chunk", textBlock("\n\n**Question:** "+q.Question+"\n\n"+hint+"\n"))
}

// approvalResolved: decided elsewhere (another client, a stopped turn,
// this connection's own answer): withdraw a dialog still open.
func (s *session) approvalResolved(ev gqlEvent) {
	var p requestPayload
	s.payload(ev, &p)
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
}

// sessionUpdated sends the mode when it changed and the plan when the
// tasks did.
func (s *session) sessionUpdated(ev gqlEvent) {
	var p sessionUpdatedPayload
	s.payload(ev, &p)
	mode := modeOf(p.Session.ApprovalMode, p.Session.AgentMode)
	s.mu.Lock()
	changed := mode != s.mode
	s.mode = mode
	s.mu.Unlock()
	if changed {
		s.update(currentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeID: mode})
	}
	if slices.Contains(p.Changed, "tasks") {
		s.sendPlan(p.Session.Tasks)
	}
}

// guardianLine is a guardian verdict as one line of text.
func guardianLine(g client.GuardianVerdictFields) string {
	line := "guardian: " + g.Verdict
	if g.Cause != "" && g.Cause != "verdict" {
		line += " (" + g.Cause + ")"
	}
	if g.Model != "" {
		line += " by " + g.Model
	}
	if g.Reason != "" {
		line += ": " + g.Reason
	}
	return line
}
