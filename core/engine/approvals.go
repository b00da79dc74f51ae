package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/foya-dev/foya/core"
)

// pendingRequest is an approval or a question waiting for a person.
type pendingRequest struct {
	kind      string // "approval request" or "question"
	sessionID string
	// parentID is the parent of a sub-agent child session: the request is
	// mirrored in its log and may be answered through it (SES-12).
	parentID string
	payload  any // ApprovalPayload or QuestionPayload
	ch       chan string
	// taken is set (under the requests lock) once an answer or a cancellation
	// claimed the request, so exactly one end is recorded.
	taken bool
}

// mirrored returns the copy of a request payload recorded in the parent's
// log, marked with the child session it belongs to.
func mirrored(payload any, childID string) any {
	switch p := payload.(type) {
	case core.ApprovalPayload:
		p.ChildSessionID = childID
		return p
	case core.QuestionPayload:
		p.ChildSessionID = childID
		return p
	}
	return payload
}

// actionOf names the class of action a tool performs, for grants and
// summaries: "read", "write" or "command".
func actionOf(info core.ToolInfo) string {
	switch {
	case info.ReadOnly:
		return "read"
	case info.Action != "":
		return info.Action
	case info.Name == "bash":
		return "command"
	default:
		return "write"
	}
}

// summarize is a human-readable line about a call: the command text, or the
// path and a preview of the change.
func summarize(c core.ToolCall) string {
	var in map[string]any
	_ = json.Unmarshal(c.Input, &in)
	str := func(k string) string { v, _ := in[k].(string); return v }
	switch {
	case str("command") != "":
		return "run: " + str("command")
	case str("path") != "" && str("new_string") != "":
		return fmt.Sprintf("edit %s: replace %q with %q", str("path"), core.TruncateRunes(str("old_string"), 120, "…"), core.TruncateRunes(str("new_string"), 120, "…"))
	case str("path") != "" && str("content") != "":
		return fmt.Sprintf("write %s (%d bytes): %q", str("path"), len(str("content")), core.TruncateRunes(str("content"), 120, "…"))
	case str("path") != "":
		return c.Name + " " + str("path")
	}
	return fmt.Sprintf("%s %.200s", c.Name, c.Input)
}

// authorize applies the session's agent mode and approval mode to one call,
// asking the person when needed. It reads the session at call time, so a
// mode change applies to the next tool call.
func (r *Requests) authorize(ctx context.Context, s core.Session, c core.ToolCall, info core.ToolInfo) (bool, string) {
	if info.ReadOnly {
		return true, ""
	}
	if readOnlyMode(s.AgentMode) {
		return false, fmt.Sprintf("refused: the session is planning (agent mode %s), so %s, which changes files or runs commands, is not allowed; propose the change in the plan instead", strings.ToUpper(string(s.AgentMode)), c.Name)
	}
	switch s.ApprovalMode {
	case core.ApprovalBypass:
		return true, ""
	case core.ApprovalExplore:
		return false, fmt.Sprintf("refused: approval mode EXPLORE runs only read-only tools, and %s is not read-only", c.Name)
	}
	action := actionOf(info)
	if r.granted(s.ID, c.Name+"/"+action) {
		return true, ""
	}
	switch d := r.requestApproval(ctx, s.ID, c, action); d {
	case core.ApprovalApproved, core.ApprovalApprovedForSession:
		return true, ""
	case core.ApprovalDenied:
		return false, fmt.Sprintf("denied: the user did not allow %s (%s)", c.Name, summarize(c))
	default:
		return false, "not run: the turn was stopped while waiting for approval"
	}
}

// wouldAsk reports whether authorize would put c to a person: a write or
// command, in an executing session whose approval mode asks (ASK or
// GUARDED), without a session grant for it.
func (r *Requests) wouldAsk(s core.Session, c core.ToolCall, info core.ToolInfo) bool {
	if info.ReadOnly || readOnlyMode(s.AgentMode) {
		return false
	}
	switch s.ApprovalMode {
	case core.ApprovalBypass, core.ApprovalExplore:
		return false
	}
	return !r.granted(s.ID, c.Name+"/"+actionOf(info))
}

// authorizeAsk asks a person about c whatever the approval mode, because a
// PreToolUse hook answered permissionDecision "ask".
func (r *Requests) authorizeAsk(ctx context.Context, s core.Session, c core.ToolCall, info core.ToolInfo) (bool, string) {
	switch d := r.requestApproval(ctx, s.ID, c, actionOf(info)); d {
	case core.ApprovalApproved, core.ApprovalApprovedForSession:
		return true, ""
	case core.ApprovalDenied:
		return false, fmt.Sprintf("denied: a PreToolUse hook asked for approval and the user did not allow %s (%s)", c.Name, summarize(c))
	default:
		return false, "not run: the turn was stopped while waiting for approval"
	}
}

// requestApproval records approval_requested and blocks until a decision or
// the end of ctx ("" then).
func (r *Requests) requestApproval(ctx context.Context, sessionID string, c core.ToolCall, action string) core.ApprovalDecision {
	p := core.ApprovalPayload{RequestID: core.NewID("apr"), ToolCallID: c.ID, Tool: c.Name, Action: action, Summary: summarize(c), Input: c.Input}
	asked := time.Now()
	d, _ := r.await(ctx, sessionID, "approval request", p.RequestID, core.EventApprovalRequested, p)
	approvalDecided(ctx, "user", string(core.ApprovalDecision(d)), time.Since(asked))
	return core.ApprovalDecision(d)
}

// await registers a pending request, records its event and blocks until a
// person answers (ok) or ctx ends. A sub-agent's request is also recorded in
// its parent's log (with the child's id), so a client following the parent
// sees it and can answer it there (SES-12). A request still open when ctx
// ends gets its end event (approval_resolved with decision cancelled, or
// question_answered with cancelled set), so every request in the log ends.
func (r *Requests) await(ctx context.Context, sessionID, kind, id string, t core.EventType, payload any) (string, bool) {
	pctx := context.WithoutCancel(ctx)
	p := &pendingRequest{kind: kind, sessionID: sessionID, payload: payload, ch: make(chan string, 1)}
	if s, err := r.svc.Session(pctx, sessionID); err == nil {
		p.parentID = s.ParentID
	}
	r.add(id, p)
	defer r.remove(id)
	if err := appendEvent(ctx, r.svc, sessionID, t, payload); err != nil {
		r.log.Error("record "+kind, "session_id", sessionID, "err", err)
		return "", false
	}
	if p.parentID != "" {
		if err := appendEvent(ctx, r.svc, p.parentID, t, mirrored(payload, sessionID)); err != nil && !errors.Is(err, core.ErrNotFound) {
			r.log.Error("mirror "+kind+" to the parent session", "session_id", p.parentID, "err", err)
		}
	}
	select {
	case a := <-p.ch:
		return a, true
	case <-ctx.Done():
	}
	if r.abandon(id, p) {
		return "", false // answered meanwhile; that answer recorded the end
	}
	end, endType := payload, t
	switch v := payload.(type) {
	case core.ApprovalPayload:
		v.Decision, v.Input = core.ApprovalCancelled, nil
		end, endType = v, core.EventApprovalResolved
	case core.QuestionPayload:
		v.Cancelled = true
		if v.Elicitation != nil {
			v.Action = elicitEnd(ctx)
		}
		end, endType = v, core.EventQuestionAnswered
	}
	r.recordEnd(pctx, p, endType, end)
	return "", false
}

// recordEnd records the end of a request in its session's log and, for a
// sub-agent's request, in its parent's log.
func (r *Requests) recordEnd(ctx context.Context, p *pendingRequest, t core.EventType, payload any) {
	if err := appendEvent(ctx, r.svc, p.sessionID, t, payload); err != nil && !errors.Is(err, core.ErrNotFound) {
		r.log.Error("record "+p.kind+" end", "session_id", p.sessionID, "err", err)
	}
	if p.parentID != "" {
		if err := appendEvent(ctx, r.svc, p.parentID, t, mirrored(payload, p.sessionID)); err != nil && !errors.Is(err, core.ErrNotFound) {
			r.log.Error("mirror "+p.kind+" end to the parent session", "session_id", p.parentID, "err", err)
		}
	}
}

// ResolveApproval decides a pending approval request. The first decision
// wins; later ones (from any client) get CONFLICT.
func (r *Requests) ResolveApproval(ctx context.Context, sessionID, requestID string, d core.ApprovalDecision) error {
	switch d {
	case core.ApprovalApproved, core.ApprovalApprovedForSession, core.ApprovalDenied:
	default:
		return core.Errorf(core.CodeBadInput, "decision %q: use approved, approved_for_session or denied", d)
	}
	p, err := r.take(sessionID, requestID, "approval request", d == core.ApprovalApprovedForSession)
	if err != nil {
		return err
	}
	payload := p.payload.(core.ApprovalPayload)
	payload.Decision, payload.Input = d, nil
	r.recordEnd(context.WithoutCancel(ctx), p, core.EventApprovalResolved, payload)
	p.ch <- string(d)
	return nil
}

// AnswerQuestion answers a question the model asked with the question tool.
func (r *Requests) AnswerQuestion(ctx context.Context, sessionID, requestID, answer string) error {
	if el, _ := r.elicitation(requestID); el != nil {
		return r.AnswerElicitation(ctx, sessionID, requestID, core.ElicitAccept, answer)
	}
	if strings.TrimSpace(answer) == "" {
		return core.Errorf(core.CodeBadInput, "answer: write an answer")
	}
	p, err := r.take(sessionID, requestID, "question", false)
	if err != nil {
		return err
	}
	payload := p.payload.(core.QuestionPayload)
	payload.Answer = answer
	r.recordEnd(context.WithoutCancel(ctx), p, core.EventQuestionAnswered, payload)
	p.ch <- answer
	return nil
}

// ask records question_requested and waits for AnswerQuestion or ctx.
func (r *Requests) ask(ctx context.Context, sessionID string, c core.ToolCall, question string) (string, bool) {
	q := core.QuestionPayload{RequestID: core.NewID("qst"), ToolCallID: c.ID, Question: question}
	return r.await(ctx, sessionID, "question", q.RequestID, core.EventQuestionRequested, q)
}

// ForgetGrants drops the session's temporary grants (APPROVED_FOR_SESSION).
func (r *Requests) ForgetGrants(sessionID string) { r.forgetGrants(sessionID) }
