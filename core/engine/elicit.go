package engine

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/foya-dev/foya/core"
)

// sessionAsker asks the person driving a session on behalf of an MCP
// server during one tool call (core.Asker): the elicitation becomes a
// question_requested of that call, answered with answerQuestion.
type sessionAsker struct {
	r         *Requests
	sessionID string
	call      core.ToolCall
}

// elicitAnswer is what an answer sends to the waiting asker.
type elicitAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Elicit records question_requested with the elicitation and waits for
// an answer; a ctx past its deadline declines, a cancelled one cancels.
func (a sessionAsker) Elicit(ctx context.Context, q core.Elicitation) (core.ElicitationResult, error) {
	p := core.QuestionPayload{RequestID: core.NewID("qst"), ToolCallID: a.call.ID, Question: q.Question(), Elicitation: &q}
	raw, ok := a.r.await(ctx, a.sessionID, "question", p.RequestID, core.EventQuestionRequested, p)
	if !ok {
		return core.ElicitationResult{Action: elicitEnd(ctx)}, nil
	}
	var ans elicitAnswer
	if err := json.Unmarshal([]byte(raw), &ans); err != nil {
		return core.ElicitationResult{}, err
	}
	return core.ElicitationResult{Action: ans.Action, Content: ans.Content}, nil
}

// elicitEnd is the action of an elicitation nobody answered: decline when
// its time ran out, cancel when its turn stopped.
func elicitEnd(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return core.ElicitDecline
	}
	return core.ElicitCancel
}

// elicitation returns the elicitation of a pending question, or nil; ok
// reports whether the question is pending.
func (r *Requests) elicitation(requestID string) (*core.Elicitation, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pending[requestID]
	if !ok || p.kind != "question" {
		return nil, false
	}
	q, _ := p.payload.(core.QuestionPayload)
	return q.Elicitation, true
}

// AnswerElicitation answers a question an MCP server asked: accept (with
// the answer checked against its fields), decline or cancel. A question of
// the model can only be accepted (AnswerQuestion).
func (r *Requests) AnswerElicitation(ctx context.Context, sessionID, requestID, action, answer string) error {
	switch action {
	case core.ElicitAccept, core.ElicitDecline, core.ElicitCancel:
	default:
		return core.Errorf(core.CodeBadInput, "action %q: use accept, decline or cancel", action)
	}
	el, pending := r.elicitation(requestID)
	if pending && el == nil {
		if action == core.ElicitAccept {
			return r.AnswerQuestion(ctx, sessionID, requestID, answer)
		}
		return core.Errorf(core.CodeBadInput, "action: question %s was asked by the model, not by an MCP server; answer it (action ACCEPT)", requestID)
	}
	var content map[string]any
	if pending && action == core.ElicitAccept {
		var err error
		if content, err = el.ParseAnswer(answer); err != nil {
			return core.Errorf(core.CodeBadInput, "%s", err.Error())
		}
	}
	p, err := r.take(sessionID, requestID, "question", false)
	if err != nil {
		return err
	}
	payload := p.payload.(core.QuestionPayload)
	payload.Action, payload.Content = action, content
	r.recordEnd(context.WithoutCancel(ctx), p, core.EventQuestionAnswered, payload)
	raw, _ := json.Marshal(elicitAnswer{Action: action, Content: content})
	p.ch <- string(raw)
	return nil
}
