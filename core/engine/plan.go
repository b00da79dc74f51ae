package engine

import (
	"context"
	"errors"
	"strings"

	"github.com/foya-dev/foya/core"
)

// Plan mode (SES-5): a session in PLAN may only read; when a PLAN turn
// completes (its final message, with the tasks list if the agent kept one,
// is the plan) the kernel moves the session to AWAITING_CONFIRMATION, still
// read-only; the person then calls confirmPlan, which moves it to EXECUTE and
// starts the execution turn with the plan as context. Messages sent while
// awaiting confirmation revise the plan (the session stays awaiting).
// updateSession(agentMode: EXECUTE) leaves planning without starting a turn;
// only the kernel sets AWAITING_CONFIRMATION.

// planConfirmedText opens the user message of the execution turn.
const planConfirmedText = "The plan above is confirmed. Carry it out now; you may change files and run commands."

// readOnlyMode reports whether an agent mode refuses tools that change files
// or run commands.
func readOnlyMode(m core.AgentMode) bool {
	return m == core.AgentPlan || m == core.AgentAwaitingConfirmation
}

// planDone moves a top-level session whose planning turn completed to
// AWAITING_CONFIRMATION. Sub-agents report back to their parent instead.
func (e *Engine) planDone(ctx context.Context, s core.Session) {
	if s.ParentID != "" {
		return
	}
	if _, _, err := e.svc.SwapAgentMode(ctx, s.ID, []core.AgentMode{core.AgentPlan}, core.AgentAwaitingConfirmation); err != nil && !errors.Is(err, core.ErrNotFound) {
		e.log.Error("await plan confirmation", "session_id", s.ID, "err", err)
	}
}

// ConfirmPlan confirms the plan of a session awaiting confirmation: it moves
// the session to EXECUTE and sends the execution turn's message (queued if a
// turn is running). edits, when given, are the person's changes to the plan
// and travel with that message. A session not awaiting confirmation gets
// CONFLICT.
func (e *Engine) ConfirmPlan(ctx context.Context, sessionID, edits string) (core.SendResult, error) {
	edits = strings.TrimSpace(edits)
	if len(edits) > MaxInputTextBytes {
		return core.SendResult{}, core.Errorf(core.CodeBadInput, "edits: at most %d bytes", MaxInputTextBytes)
	}
	cur, ok, err := e.svc.SwapAgentMode(ctx, sessionID, []core.AgentMode{core.AgentAwaitingConfirmation}, core.AgentExecute)
	if err != nil {
		return core.SendResult{}, err
	}
	if !ok {
		return core.SendResult{}, core.Errorf(core.CodeConflict, "session %s is in agent mode %s; confirmPlan needs AWAITING_CONFIRMATION, which follows a completed PLAN turn", sessionID, strings.ToUpper(string(cur)))
	}
	text := planConfirmedText
	if edits != "" {
		text += "\n\nThe user changed the plan as follows; these changes take precedence:\n" + edits
	}
	res, err := e.SendMessage(ctx, sessionID, core.UserInput{Text: text})
	if err != nil {
		// Nothing was sent: the plan still awaits confirmation.
		if _, _, rerr := e.svc.SwapAgentMode(context.WithoutCancel(ctx), sessionID, []core.AgentMode{core.AgentExecute}, core.AgentAwaitingConfirmation); rerr != nil {
			e.log.Error("restore plan confirmation", "session_id", sessionID, "err", rerr)
		}
		return core.SendResult{}, err
	}
	return res, nil
}
