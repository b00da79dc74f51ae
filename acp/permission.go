package acp

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/foya-dev/foya/client"
)

// Permissions: the kernel's approval requests become the client's
// session/request_permission dialogs.

// permissionOptions are the choices of every permission dialog.
var permissionOptions = []permissionOption{
	{OptionID: "allow_once", Name: "Allow once", Kind: "allow_once"},
	{OptionID: "allow_always", Name: "Allow for this session", Kind: "allow_always"},
	{OptionID: "reject_once", Name: "Reject", Kind: "reject_once"},
}

// requestPermission asks the client about an approval request and resolves
// it with the answer (denied when the dialog fails); nothing when the
// request is withdrawn (ctx ends) before the client answers.
func (s *session) requestPermission(ctx context.Context, withdraw context.CancelFunc, requestID, toolCallID, tool, summary string, input json.RawMessage) {
	defer withdraw()
	tc := s.toolCall(toolCallID, tool, input)
	if summary != "" {
		tc.Title = firstLine(summary, 200)
	}
	if ctx.Err() != nil {
		return // decided before the dialog went out
	}
	var res permissionResponse
	err := s.a.conn.call(ctx, "session/request_permission",
		permissionRequest{SessionID: s.id, ToolCall: tc, Options: permissionOptions}, &res)
	s.mu.Lock()
	_, open := s.asking[requestID]
	delete(s.asking, requestID)
	s.mu.Unlock()
	if !open || s.ctx.Err() != nil {
		return // withdrawn: decided elsewhere, or the session was closed
	}
	if err != nil {
		s.a.log.Warn("acp: permission request failed; denying", "session_id", s.id, "tool", tool, "err", err)
	}
	rctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	_, err = client.ResolveApproval(rctx, s.a.k, s.id, requestID, decision(res, err))
	var ce codedError
	if err != nil && !(errors.As(err, &ce) && ce.GraphQLCode() == "CONFLICT") {
		s.a.log.Warn("acp: resolve approval", "session_id", s.id, "err", err)
	}
}

// decision is the client's answer to a permission dialog: denied unless
// it selected an allow option.
func decision(res permissionResponse, err error) client.ApprovalDecision {
	if err != nil || res.Outcome.Outcome != "selected" {
		return client.ApprovalDecisionDenied
	}
	switch res.Outcome.OptionID {
	case "allow_once":
		return client.ApprovalDecisionApproved
	case "allow_always":
		return client.ApprovalDecisionApprovedForSession
	}
	return client.ApprovalDecisionDenied
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
	for _, o := range s.openRequests(r.Events) {
		s.a.log.Info("acp: the running turn waits for an answer; asking again", "session_id", s.id, "request_id", o.RequestID, "kind", o.kind)
		if o.kind == "approval_requested" {
			s.approvalRequested(&gqlApproval{RequestID: o.RequestID, ToolCallID: o.ToolCallID, Tool: o.Tool, Summary: o.Summary, Input: o.Input})
		} else {
			s.questionRequested(o.requestPayload)
		}
	}
}

// openRequest is an approval or a question still open (kind: the event
// type that opened it).
type openRequest struct {
	requestPayload
	kind string
}

// openRequests is the approvals and questions the events open and do not
// close, in the order they were opened.
func (s *session) openRequests(events []client.ACPEventsEventsSessionEvent) []openRequest {
	var order []string
	open := map[string]openRequest{}
	for _, e := range events {
		var p requestPayload
		if e.Payload != nil {
			s.payload(gqlEvent{Type: e.Type, Payload: *e.Payload}, &p)
		}
		switch e.Type {
		case "approval_requested", "question_requested":
			if _, seen := open[p.RequestID]; !seen {
				order = append(order, p.RequestID)
			}
			open[p.RequestID] = openRequest{p, e.Type}
		case "approval_resolved", "question_answered", "turn_finished":
			if e.Type == "turn_finished" {
				clear(open)
			}
			delete(open, p.RequestID)
		}
	}
	var out []openRequest
	for _, id := range order {
		if o, ok := open[id]; ok {
			out = append(out, o)
		}
	}
	return out
}
