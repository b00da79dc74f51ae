package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/hooks"
	"github.com/foya-dev/foya/core/session"
)

// loop runs model steps until the model answers without tool calls.
func (e *Engine) loop(ctx context.Context, sessionID string, run *turnRun) (core.TurnStatus, string) {
	t := &turnLoop{e: e, ctx: ctx, pctx: context.WithoutCancel(ctx), sessionID: sessionID, run: run}
	if status, reason, done := t.begin(); done {
		return status, reason
	}
	for n := 1; ; {
		next, status, reason := t.step(n)
		switch next {
		case stepEnd:
			return status, reason
		case stepNext:
			n++
		case stepRepeat:
			// The same step again, after the compaction of an overflow: it
			// does not count against the max-steps guard.
		}
	}
}

// stepOutcome says how the turn goes on after a model step.
type stepOutcome int

const (
	stepNext   stepOutcome = iota // the next model step
	stepRepeat                    // the same step again
	stepEnd                       // the turn ends (with a status and reason)
)

// turnLoop is the state of one turn's model steps.
type turnLoop struct {
	e         *Engine
	ctx, pctx context.Context // pctx: ctx without its cancellation, for what must be recorded
	sessionID string
	run       *turnRun

	overflowRetried bool
	stopContinues   int
	spent           int64 // output tokens of the turn so far (OutputLimits.TurnOutputTokens)
	// The history read before the hooks (to tell whether this is the
	// session's first turn) serves the first model request too, unless
	// something was appended to the session in between (its head moved).
	early     *historyRead
	readFirst *core.Session // the session as read by begin, while nothing was appended
}

// begin runs the hooks before the turn's first model request
// (SessionStart, UserPromptSubmit); done is set when they refused it.
func (t *turnLoop) begin() (status core.TurnStatus, reason string, done bool) {
	e, run := t.e, t.run
	var s core.Session
	if run.session != nil {
		s, run.session = *run.session, nil
	} else {
		var err error
		if s, err = e.svc.Session(t.pctx, t.sessionID); err != nil {
			return "", "", false
		}
	}
	turnAttrs(t.ctx, s)
	first := false
	if e.cfg.Hooks != nil {
		// Inactive (rewound) messages count for the first-turn test.
		if all, err := e.svc.History(t.pctx, s, true); err == nil {
			t.early = &historyRead{head: s.HeadSeq, msgs: session.ActiveMessages(all)}
			first = isFirstTurn(all, run.id)
		}
	}
	if first {
		// SessionStart runs before the session's first model request.
		d := e.hooks.runHooks(t.ctx, s, run.id, hooks.HookSessionStart, core.HookInput{Source: "startup"})
		e.hooks.persistHookContext(t.pctx, t.sessionID, run.id, d.contexts)
	}
	// UserPromptSubmit runs before the turn's first model request.
	d := e.hooks.runHooks(t.ctx, s, run.id, hooks.HookUserPromptSubmit, core.HookInput{Prompt: run.prompt})
	if d.block {
		return core.TurnFailed, "the prompt was refused by a UserPromptSubmit hook: " + cmp.Or(d.reason, "no reason given"), true
	}
	e.hooks.persistHookContext(t.pctx, t.sessionID, run.id, d.contexts)
	if e.svc.Histories().At(t.sessionID, s.HeadSeq) {
		// Nothing was appended since (a hook's events, a settings
		// change): every append goes through this service and moves
		// the cached head.
		t.readFirst = &s
	}
	return "", "", false
}

// session reads the session for step n: settings apply at each step
// (SES-8); the first step uses begin's read if nothing came since.
func (t *turnLoop) session() (core.Session, error) {
	if t.readFirst != nil {
		s := *t.readFirst
		t.readFirst = nil
		return s, nil
	}
	return t.e.svc.Session(t.pctx, t.sessionID)
}

// request compiles the step's provider request, compacting first when the
// history is over the budget's high-water mark.
func (t *turnLoop) request(s core.Session, b boundModel) (compiled, error) {
	e := t.e
	var msgs []core.Message
	if t.early != nil && t.early.head == s.HeadSeq {
		msgs = t.early.msgs
	}
	t.early = nil
	c, err := e.compileFrom(t.pctx, s, b, true, msgs)
	if err != nil {
		return c, err
	}
	if c.usage.Tokens > c.usage.Limit {
		// Over the high-water mark: compact first (PRV-12 never applies
		// here: this is the budget, not an error).
		if err := e.compactor.compact(t.ctx, s, b, "auto"); err != nil {
			e.log.Warn("automatic compaction", "session_id", t.sessionID, "err", err)
		} else if c, err = e.compile(t.pctx, s, b, true); err != nil {
			return c, err
		}
	}
	return c, nil
}

// step runs model step n: one request, then the end of the turn or its
// tool calls.
//
// The turn's goroutine waits for the provider's chunks inside the call to
// streamWithRetry, below step's frame: what the step holds (the session,
// the model, the compiled request) lives in a stepCall on the heap, and
// what comes before and after the stream runs in prepare and finish, so
// step's own frame is small (see streamWithRetry).
func (t *turnLoop) step(n int) (stepOutcome, core.TurnStatus, string) {
	sc, next, status, reason := t.prepare(n)
	if sc == nil {
		return next, status, reason
	}
	sc.res = t.e.streamWithRetry(t.ctx, t.sessionID, t.run.id, &sc.b, &sc.req, sc.left)
	return t.finish(sc)
}

// stepCall is one model step's request, from prepare to finish.
type stepCall struct {
	s       core.Session
	b       boundModel
	c       compiled
	req     core.ProviderRequest
	left    int64
	started time.Time
	res     streamResult
}

// prepare reads the session and compiles the request of step n; a nil
// stepCall when the turn ends before it (with the outcome to return).
func (t *turnLoop) prepare(n int) (*stepCall, stepOutcome, core.TurnStatus, string) {
	e, ctx, pctx, run := t.e, t.ctx, t.pctx, t.run
	if ctx.Err() != nil {
		return nil, stepEnd, core.TurnCancelled, cancelReason(ctx)
	}
	s, err := t.session()
	if err != nil {
		return nil, stepEnd, core.TurnFailed, core.ErrorMessage(err)
	}
	maxSteps := e.cfg.MaxSteps
	if s.Agent != nil && s.Agent.MaxTurns > 0 {
		maxSteps = min(maxSteps, s.Agent.MaxTurns)
	}
	if n > maxSteps {
		return nil, stepEnd, core.TurnFailed, fmt.Sprintf("stopped after %d model requests without a final answer (the max-steps guard)", maxSteps)
	}
	b, err := e.models.resolve(pctx, s)
	if err != nil {
		return nil, stepEnd, core.TurnFailed, core.ErrorMessage(err)
	}
	c, err := t.request(s, b)
	if err != nil {
		return nil, stepEnd, core.TurnFailed, core.ErrorMessage(err)
	}
	req := c.req
	left := e.out.TurnOutputTokens - t.spent
	if left <= 0 {
		run.code = CodeOutputLimit
		return nil, stepEnd, core.TurnFailed, e.out.tokensCap().reason
	}
	req.MaxOutputTokens = maxOutputFor(req.MaxOutputTokens, left)
	return &stepCall{s: s, b: b, c: c, req: req, left: left, started: time.Now().UTC()}, 0, "", ""
}

// finish ends step sc once its stream is over: the fallback chain for a
// call another model may fix, the usage, then the end of the turn or its
// tool calls.
func (t *turnLoop) finish(sc *stepCall) (stepOutcome, core.TurnStatus, string) {
	e, ctx, pctx, sessionID, run := t.e, t.ctx, t.pctx, t.sessionID, t.run
	s, started, left := sc.s, sc.started, sc.left
	// A call that fails in a way another model may fix continues on the
	// fallback chain (the session keeps its model).
	call := t.fallBack(s, fallbackCall{b: sc.b, c: sc.c, req: sc.req, res: sc.res}, left)
	b, c, req := call.b, call.c, call.req
	tools := c.tools
	res := call.res
	finished := time.Now().UTC()
	t.spent += outputTokens(res)
	e.rec.recordUsage(pctx, sessionID, b, req, res, "turn")
	if res.err == nil && !res.cancelled && res.usage != nil {
		e.accept(pctx, sessionID, b.route, c.active, req, *res.usage)
	}

	turnStart := run.started
	msg := core.Message{
		Role: core.RoleAssistant, Text: res.text, Reasoning: res.reasoning, ToolCalls: res.calls, Segments: res.segments,
		TurnID: run.id, StartedAt: &started, FinishedAt: &finished, Model: b.model.ID,
		TurnStartedAt: &turnStart, Truncated: res.truncated,
	}
	if res.err == nil && !res.cancelled && res.limit == nil {
		// Native state of a complete reply only: a cut-off one (an
		// unsigned thinking block) would be rejected on replay.
		msg.ProviderState = newProviderState(e.log, sessionID, b.route, res.state)
		msg.FinishReason, msg.Refusal = res.finish, res.refusal
	}
	if res.cancelled || res.limit != nil || res.err != nil {
		return t.cut(s, b, res, msg)
	}
	if len(res.calls) == 0 {
		return t.answered(s, msg)
	}
	if err := e.persist(pctx, sessionID, core.EventMessageEnd, core.MessagePayload{Message: msg}); err != nil {
		return stepEnd, core.TurnFailed, core.ErrorMessage(err)
	}
	if stop := e.tools.run(ctx, sessionID, run.id, res.calls, tools); stop {
		return stepEnd, core.TurnCancelled, cancelReason(ctx)
	}
	return stepNext, "", ""
}

// ends marks msg as the turn's last message: the turn ends now.
func (t *turnLoop) ends(msg *core.Message) {
	t.run.finished = time.Now().UTC()
	msg.TurnFinishedAt = &t.run.finished
}

// keepLast ends the turn with msg, the partial output of a step that did
// not complete.
func (t *turnLoop) keepLast(msg core.Message) {
	t.ends(&msg)
	if !t.e.keepPartial(t.pctx, t.sessionID, msg) {
		t.run.finished = time.Time{}
	}
}

// cut handles a step that did not complete: stopped, closed by an output
// cap, or failed. An overflow is compacted and the step repeated, once per
// turn.
func (t *turnLoop) cut(s core.Session, b boundModel, res streamResult, msg core.Message) (stepOutcome, core.TurnStatus, string) {
	switch {
	case res.cancelled:
		reason := cancelReason(t.ctx)
		msg.Interrupted, msg.TurnStatus, msg.TurnReason = true, core.TurnCancelled, reason
		msg.ToolCalls = completeCalls(res.calls)
		t.keepLast(msg)
		return stepEnd, core.TurnCancelled, reason
	case res.limit != nil:
		// An output cap closed the stream: what arrived is kept (up to
		// the cap), no call of the cut reply runs, and the turn ends.
		reason := res.limit.reason
		t.run.code = CodeOutputLimit
		msg.TurnStatus, msg.TurnReason = core.TurnFailed, reason
		msg.ToolCalls = nil
		t.keepLast(msg)
		return stepEnd, core.TurnFailed, reason
	}
	// An endpoint may echo the key in an error body; it never
	// reaches the log of events.
	reason := core.ScrubSecret(failureReason(res.err), b.endpoint.APIKey)
	var perr *core.ProviderError
	if errors.As(res.err, &perr) && perr.Category == core.ProviderOutputLimit {
		// The provider stopped at the max output it was sent.
		t.run.code, msg.Truncated = CodeOutputLimit, true
	}
	if errors.As(res.err, &perr) && perr.Category == core.ProviderContextOverflow {
		// Exactly one compaction and retry per turn; nothing else
		// (rate limits, quota, auth, network…) ever compacts.
		if !t.overflowRetried {
			t.overflowRetried = true
			herr := t.e.compactor.compact(t.ctx, s, b, "overflow")
			if herr == nil {
				return stepRepeat, "", ""
			}
			reason += "; compaction could not make room: " + core.ErrorMessage(herr)
		} else {
			reason += "; the request still overflows after compaction"
		}
	}
	msg.TurnStatus, msg.TurnReason = core.TurnFailed, reason
	msg.ToolCalls = nil // incomplete calls are never run or replayed
	t.keepLast(msg)
	return stepEnd, core.TurnFailed, reason
}

// answered handles a reply without tool calls: Stop hooks may send the
// model back to work, a bounded number of times per turn, with their stderr
// as feedback; otherwise the turn completes.
func (t *turnLoop) answered(s core.Session, msg core.Message) (stepOutcome, core.TurnStatus, string) {
	e, ctx, pctx, sessionID := t.e, t.ctx, t.pctx, t.sessionID
	active := t.stopContinues > 0
	event := hooks.HookStop
	if s.ParentID != "" {
		event = hooks.HookSubagentStop
	}
	d := e.hooks.runHooks(ctx, s, t.run.id, event, core.HookInput{StopHookActive: &active})
	if d.block && t.stopContinues < core.MaxStopContinuations && ctx.Err() == nil {
		t.stopContinues++
		if err := e.persist(pctx, sessionID, core.EventMessageEnd, core.MessagePayload{Message: msg}); err != nil {
			return stepEnd, core.TurnFailed, core.ErrorMessage(err)
		}
		e.hooks.persistHookContext(pctx, sessionID, t.run.id, []hookContext{{source: "hook " + event, text: "A " + event + " hook asked you to continue: " + cmp.Or(d.reason, "no reason given")}})
		return stepNext, "", ""
	}
	msg.TurnStatus = core.TurnCompleted
	t.ends(&msg)
	if err := e.persist(pctx, sessionID, core.EventMessageEnd, core.MessagePayload{Message: msg}); err != nil {
		return stepEnd, core.TurnFailed, core.ErrorMessage(err)
	}
	e.planDone(pctx, s) // a completed PLAN turn awaits confirmation (SES-5)
	return stepEnd, core.TurnCompleted, ""
}
