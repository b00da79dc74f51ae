package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/hooks"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/core/telemetry"
)

// CompactionPrompt asks for the fixed summary structure, so that compaction
// never loses the task.
const CompactionPrompt = `You are compacting the history of a coding-agent session so that the work can continue in a fresh context window.
Write a summary of the conversation below with exactly these Markdown sections, in this order:
## Goal
## Constraints and user preferences
## Decisions
## Work done
## Files touched
## Open tasks
## Next step
Be specific and complete: keep file paths, commands, identifiers, numbers, error messages and the user's exact requirements. Write "none" for an empty section. Do not invent anything and do not address the user.`

// checkpointIntro labels the checkpoint in the provider view: kernel-made
// context, never disguised as a user message.
const checkpointIntro = "Context checkpoint, made by the kernel (not a user message): a summary of the earlier conversation, through event seq %d. The messages after it are verbatim.\n\n"

// errNothingToCompact says compaction would save nothing.
var errNothingToCompact = core.Errorf(core.CodeConflict, "nothing to compact: everything before the newest user message is already summarized or there is nothing before it")

// compactor summarizes a session's history into checkpoints (portable or
// provider-native) and finds the checkpoint that still applies to a
// history.
type compactor struct {
	svc     *session.Service
	history core.HistoryStore // nil disables compaction across restarts
	log     *slog.Logger
	hooks   *hookRunner
	rec     usageRecorder
	// failed remembers, per route and history digest, why a compaction
	// failed, so it is not retried in a loop.
	failed memo[string]
}

// checkpoint returns the session's newest checkpoint when it still
// applies to msgs and route.
func (cm *compactor) checkpoint(ctx context.Context, s core.Session, route string, msgs []core.Message) *core.CheckpointPayload {
	if cm.history == nil {
		return nil
	}
	sessionID := s.ID
	ev, known := cm.svc.Histories().LatestCheckpoint(sessionID, s.HeadSeq)
	if !known {
		read, err := cm.history.LatestEvent(ctx, sessionID, core.EventCompactionCheckpoint)
		switch {
		case errors.Is(err, core.ErrNotFound):
			cm.svc.Histories().SetCheckpoint(sessionID, s.HeadSeq, nil)
		case err != nil:
			cm.log.Warn("read checkpoint", "session_id", sessionID, "err", err)
			return nil
		default:
			ev = &read
			cm.svc.Histories().SetCheckpoint(sessionID, s.HeadSeq, ev)
		}
	}
	if ev == nil {
		return nil
	}
	var cp core.CheckpointPayload
	if err := ev.Decode(&cp); err != nil {
		return nil
	}
	if cp.Route != route || digestThrough(msgs, cp.ThroughSeq) != cp.Digest {
		return nil
	}
	return &cp
}

// afterCheckpoint drops the messages a checkpoint covers.
func afterCheckpoint(msgs []core.Message, cp *core.CheckpointPayload) []core.Message {
	if cp == nil {
		return msgs
	}
	i := slices.IndexFunc(msgs, func(m core.Message) bool { return m.Seq > cp.ThroughSeq })
	if i < 0 {
		return nil
	}
	return msgs[i:]
}

// compact summarizes the active history before the newest user message into
// a checkpoint. A failure is remembered for that coverage, so the same
// history is never retried in a loop.
//
// It is one foya.compaction span (docs/telemetry.md).
func (cm *compactor) compact(ctx context.Context, s core.Session, b boundModel, reason string) error {
	ctx, sp := telemetry.Start(ctx, telemetry.SpanCompaction, telemetry.String("foya.compaction.reason", reason), telemetry.String("foya.session.id", s.ID))
	err := cm.compactSpan(ctx, s, b, reason)
	if err != nil {
		sp.Fail("the compaction failed")
	}
	sp.End()
	return err
}

func (cm *compactor) compactSpan(ctx context.Context, s core.Session, b boundModel, reason string) error {
	trigger := "auto"
	if reason == "manual" {
		trigger = "manual"
	}
	// PreCompact hooks are informational: their exit codes never block.
	cm.hooks.runHooks(ctx, s, "", hooks.HookPreCompact, core.HookInput{Trigger: trigger})
	msgs, err := cm.svc.Messages(ctx, s.ID, false)
	if err != nil {
		return err
	}
	prev := cm.checkpoint(ctx, s, b.route, msgs)
	cut, request := compactionCut(msgs, prev)
	if cut <= 0 {
		return errNothingToCompact
	}
	covered := afterCheckpoint(msgs[:cut], prev)
	through := msgs[cut-1].Seq
	digest := digestMessages(msgs[:cut])
	key := b.route + "/" + digest
	failed, _ := cm.failed.get(key)
	if failed != "" {
		return core.Errorf(core.CodeUnavailable, "compaction of this history already failed (%s); not retrying", failed)
	}
	fail := func(err error) error {
		cm.failed.set(key, core.ErrorMessage(err))
		return err
	}
	if err := appendEvent(ctx, cm.svc, s.ID, core.EventCompactionStarted, core.CompactionStartedPayload{Reason: reason, ThroughSeq: through}); err != nil {
		return err
	}
	transcript := renderTranscript(prev, covered)
	req := core.ProviderRequest{Model: b.model.ID, MaxOutputTokens: compactionOutputCap(b.model.Capabilities), Messages: []core.ProviderMessage{
		{Role: core.RoleSystem, Content: []core.ContentPart{{Type: "text", Text: CompactionPrompt}}},
		{Role: core.RoleUser, Content: []core.ContentPart{{Type: "text", Text: transcript}}},
	}}
	before := estimateTokens(len(transcript))
	if prev != nil {
		before = prev.TokensAfter + estimateTokens(len(transcript)-len(prev.Summary))
	}
	c, native, err := cm.summarize(ctx, s, b, prev, covered, req)
	if err != nil {
		return fail(err)
	}
	cm.rec.recordUsage(ctx, s.ID, b, req, streamResult{text: c.Text, usage: c.Usage}, "compaction")
	summary := strings.TrimSpace(c.Text)
	if request != nil {
		// The cut is inside the current turn: the request it works on is
		// carried verbatim, whatever the summary says.
		summary = "The user's current request, verbatim:\n" + request.Text + "\n\n" + summary
	}
	if c.FinishReason == "length" {
		return fail(core.Errorf(core.CodeProviderError, "the compaction summary was cut off by the output limit"))
	}
	after := estimateTokens(len(summary))
	if native && len(c.State) > 0 && c.Usage != nil && c.Usage.OutputTokens > 0 {
		after = c.Usage.OutputTokens // the opaque state is what the model reads
	}
	// A native checkpoint is trusted to save room: the service made it to
	// fit its own window, and a local estimate of opaque state is moot.
	nativeState := native && len(c.State) > 0
	if summary == "" || (after >= before && !nativeState) {
		return fail(core.Errorf(core.CodeProviderError, "the compaction summary would save nothing (%d tokens for %d)", after, before))
	}
	cp := core.CheckpointPayload{ThroughSeq: through, Digest: digest, Route: b.route, Summary: summary, TokensBefore: before, TokensAfter: after, Native: native}
	if nativeState {
		if cp.ProviderState = newProviderState(cm.log, s.ID, b.route, c.State); cp.ProviderState == nil {
			return fail(core.Errorf(core.CodeProviderError, "the native checkpoint is larger than %d bytes", MaxProviderState))
		}
	}
	if err := appendEvent(ctx, cm.svc, s.ID, core.EventCompactionCheckpoint, cp); err != nil {
		return err
	}
	cm.log.Info("context compacted", "session_id", s.ID, "reason", reason, "through_seq", through, "tokens_before", before, "tokens_after", after)
	return nil
}

// summarize asks b's provider for the checkpoint: natively when it can
// compact (falling back to the portable summary when the endpoint offers
// no native compaction), else the portable summary of req. native reports
// which one c is.
func (cm *compactor) summarize(ctx context.Context, s core.Session, b boundModel, prev *core.CheckpointPayload, covered []core.Message, req core.ProviderRequest) (c core.Completion, native bool, err error) {
	if nc, ok := b.provider.(core.NativeCompactor); ok && core.HasCapability(b.provider, core.CapNativeCompactor) {
		var nreq core.ProviderRequest
		if nreq, err = cm.nativeRequest(b, prev, covered, req); err != nil {
			return c, false, err
		}
		c, err = nc.CompactContext(ctx, b.endpoint, nreq)
		native = true
		var perr *core.ProviderError
		if err != nil && errors.As(err, &perr) && perr.Category == core.ProviderUnavailable {
			// The endpoint offers no native compaction (or it is off for
			// the connection): the portable summary instead.
			cm.log.Info("native compaction unavailable; using the portable checkpoint", "session_id", s.ID, "reason", perr.Message)
			native, err = false, nil
		} else if err == nil && len(c.State) > 0 && strings.TrimSpace(c.Text) == "" {
			c.Text = nativeCheckpointText
		}
	}
	if !native {
		var can bool
		if c, can, err = b.completeDetailed(ctx, req); !can {
			return c, false, core.Errorf(core.CodeUnavailable, "provider %s can neither compact natively nor complete, so the context cannot be compacted", b.conn.ProviderKind)
		}
	}
	if err != nil {
		return c, native, catalog.ProviderFailure("summarize for compaction", err, b.endpoint.APIKey)
	}
	return c, native, nil
}

// nativeCheckpointText is the checkpoint summary when a native compactor
// returned only opaque state.
const nativeCheckpointText = "[native checkpoint: the provider keeps this part of the conversation in its own compacted form]"

// nativeRequest is what a native compactor compacts: the real
// provider view of the covered messages (with their native state on this
// route) after the previous checkpoint, whose own state or summary leads.
func (cm *compactor) nativeRequest(b boundModel, prev *core.CheckpointPayload, covered []core.Message, portable core.ProviderRequest) (core.ProviderRequest, error) {
	view, err := session.ProviderView(covered, session.ViewOptions{DropImages: true, Route: b.route})
	if err != nil {
		return core.ProviderRequest{}, err
	}
	req := core.ProviderRequest{Model: b.model.ID, Messages: view}
	if prev != nil {
		if st := prev.ProviderState.StateFor(b.route); st != nil {
			req.State = st
		} else {
			head := core.ProviderMessage{Role: core.RoleSystem, Content: []core.ContentPart{{Type: "text", Text: fmt.Sprintf(checkpointIntro, prev.ThroughSeq) + prev.Summary}}}
			req.Messages = append([]core.ProviderMessage{head}, req.Messages...)
		}
	}
	if len(req.Messages) == 0 {
		return portable, nil
	}
	return req, nil
}

// compactionCut picks how much of the active history a checkpoint covers:
// msgs[:cut]. Normally everything before the newest user message, which is
// kept verbatim with all after it. When that covers nothing new (one long
// turn), the cut moves inside the current turn, before its last tool round,
// and request is the user message the turn works on (carried verbatim in
// the checkpoint). cut is 0 when compaction would cover nothing new.
func compactionCut(msgs []core.Message, prev *core.CheckpointPayload) (cut int, request *core.Message) {
	last := -1
	for i, m := range msgs {
		if m.Role == core.RoleUser {
			last = i
		}
	}
	if last < 0 {
		return 0, nil
	}
	if last > 0 && len(afterCheckpoint(msgs[:last], prev)) > 0 {
		return last, nil
	}
	// Inside the turn: keep its last assistant message (and its results).
	k := -1
	for i := len(msgs) - 1; i > last; i-- {
		if msgs[i].Role == core.RoleAssistant {
			k = i
			break
		}
	}
	if k <= last+1 || len(afterCheckpoint(msgs[:k], prev)) == 0 {
		return 0, nil
	}
	return k, &msgs[last]
}

// renderTranscript is the plain-text history a summarizer reads.
func renderTranscript(prev *core.CheckpointPayload, msgs []core.Message) string {
	var b strings.Builder
	if prev != nil {
		b.WriteString("Summary of the conversation before this part:\n")
		b.WriteString(prev.Summary)
		b.WriteString("\n\nThe conversation continued:\n\n")
	}
	for _, m := range msgs {
		switch m.Role {
		case core.RoleUser:
			fmt.Fprintf(&b, "[user] %s\n", m.Text)
			for _, a := range m.Attachments {
				fmt.Fprintf(&b, "[user attached %s (%s)]\n", a.Name, a.MediaType)
			}
		case core.RoleAssistant:
			if m.Text != "" {
				fmt.Fprintf(&b, "[assistant] %s\n", m.Text)
			}
			if m.Interrupted {
				b.WriteString("[the user interrupted this reply]\n")
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "[assistant called %s with %s]\n", c.Name, core.TruncateRunes(string(c.Input), 2000, ""))
			}
		case core.RoleTool:
			status := "result"
			if m.IsError {
				status = "error"
			}
			fmt.Fprintf(&b, "[%s %s] %s\n", m.ToolName, status, core.TruncateRunes(m.Text, 2000, ""))
		case core.RoleSystem:
			fmt.Fprintf(&b, "[kernel context] %s\n", m.Text)
		}
	}
	return b.String()
}

// CompactSession compacts on request (phase compaction). Input arriving
// meanwhile is queued; a running turn is a CONFLICT.
func (e *Engine) CompactSession(ctx context.Context, sessionID string) (core.Session, error) {
	s, err := e.svc.Session(ctx, sessionID)
	if err != nil {
		return core.Session{}, err
	}
	b, err := e.models.resolve(ctx, s)
	if err != nil {
		return core.Session{}, err
	}
	rt := e.runtimes.get(sessionID)
	rt.mu.Lock()
	switch {
	case rt.turn != nil:
		rt.mu.Unlock()
		return core.Session{}, core.Errorf(core.CodeConflict, "session %s is running a turn; stop it or wait for it to end before compacting", sessionID)
	case rt.busy != "":
		rt.mu.Unlock()
		return core.Session{}, core.Errorf(core.CodeConflict, "session %s is busy (%s)", sessionID, rt.busy)
	}
	rt.busy = "compaction"
	rt.mu.Unlock()

	pctx := context.WithoutCancel(ctx)
	cerr := e.svc.SetPhase(pctx, sessionID, core.PhaseCompaction, "compactSession")
	if cerr == nil {
		cerr = e.compactor.compact(ctx, s, b, "manual")
		if err := e.svc.SetPhase(pctx, sessionID, core.PhaseIdle, ""); err != nil && cerr == nil {
			cerr = err
		}
	}
	rt.mu.Lock()
	rt.busy = ""
	if !rt.held && rt.turn == nil && e.dispatchLocked(pctx, sessionID, rt) {
		publishQueue(e.svc, sessionID, rt)
	}
	rt.mu.Unlock()
	if cerr != nil {
		return core.Session{}, cerr
	}
	return e.svc.Session(ctx, sessionID)
}

// ContextUsage estimates what the session's next request would take.
func (e *Engine) ContextUsage(ctx context.Context, sessionID string) (core.ContextUsage, error) {
	s, err := e.svc.Session(ctx, sessionID)
	if err != nil {
		return core.ContextUsage{}, err
	}
	b, err := e.models.resolve(ctx, s)
	if err != nil {
		return core.ContextUsage{Limit: DefaultInputBudget, Estimated: true}, nil
	}
	c, err := e.compile(ctx, s, b, false)
	if err != nil {
		return core.ContextUsage{}, err
	}
	return c.usage, nil
}

// MaxCompactionOutputTokens bounds a compaction summary's output.
const MaxCompactionOutputTokens = 8192

// compactionOutputCap is the output limit of a compaction request: at most
// MaxCompactionOutputTokens, and never more than the model's declared
// maximum output.
func compactionOutputCap(c core.Capabilities) int64 {
	n := int64(MaxCompactionOutputTokens)
	if c.MaxOutputTokens != nil && *c.MaxOutputTokens > 0 && *c.MaxOutputTokens < n {
		n = *c.MaxOutputTokens
	}
	return n
}
