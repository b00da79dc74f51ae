package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// CheckpointPayload is the payload of compaction_checkpoint: a portable
// text summary of the active history through ThroughSeq (PRV-8). It is used
// only while Digest matches the active messages it covers and Route matches
// the session's route; rewinds and route changes invalidate it.
type CheckpointPayload struct {
	ThroughSeq   int64  `json:"throughSeq"`
	Digest       string `json:"digest"`
	Route        string `json:"route"`
	Summary      string `json:"summary"`
	TokensBefore int64  `json:"tokensBefore"`
	TokensAfter  int64  `json:"tokensAfter"`
	Native       bool   `json:"native,omitempty"`
	// ProviderState is a native compactor's state (PRV-7): on the same
	// route it replaces the covered history in requests (ProviderRequest.State).
	// Never shown to clients.
	ProviderState *ProviderState `json:"providerState,omitempty"`
}

// CompactionStartedPayload is the payload of compaction_started.
type CompactionStartedPayload struct {
	// Reason is manual, auto (the budget's high-water mark) or overflow.
	Reason     string `json:"reason"`
	ThroughSeq int64  `json:"throughSeq"`
}

// NativeCompactor is the optional provider capability of compacting context
// natively (PRV-7). The runtime uses it when a provider declares
// CapNativeCompactor and falls back to the portable text checkpoint.
type NativeCompactor interface {
	CompactContext(ctx context.Context, ep Endpoint, req ProviderRequest) (Completion, error)
}

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
var errNothingToCompact = Errorf(CodeConflict, "nothing to compact: everything before the newest user message is already summarized or there is nothing before it")

// validCheckpoint returns the session's newest checkpoint when it still
// applies to msgs and route.
func (e *Engine) validCheckpoint(ctx context.Context, s Session, route string, msgs []Message) *CheckpointPayload {
	if e.cfg.History == nil {
		return nil
	}
	sessionID := s.ID
	ev, known := e.svc.Histories().latestCheckpoint(sessionID, s.HeadSeq)
	if !known {
		read, err := e.cfg.History.LatestEvent(ctx, sessionID, EventCompactionCheckpoint)
		switch {
		case errors.Is(err, ErrNotFound):
			e.svc.Histories().setCheckpoint(sessionID, s.HeadSeq, nil)
		case err != nil:
			e.log.Warn("read checkpoint", "session_id", sessionID, "err", err)
			return nil
		default:
			ev = &read
			e.svc.Histories().setCheckpoint(sessionID, s.HeadSeq, ev)
		}
	}
	if ev == nil {
		return nil
	}
	var cp CheckpointPayload
	if err := ev.Decode(&cp); err != nil {
		return nil
	}
	if cp.Route != route || digestThrough(msgs, cp.ThroughSeq) != cp.Digest {
		return nil
	}
	return &cp
}

// afterCheckpoint drops the messages a checkpoint covers.
func afterCheckpoint(msgs []Message, cp *CheckpointPayload) []Message {
	if cp == nil {
		return msgs
	}
	i := slices.IndexFunc(msgs, func(m Message) bool { return m.Seq > cp.ThroughSeq })
	if i < 0 {
		return nil
	}
	return msgs[i:]
}

// compact summarizes the active history before the newest user message into
// a checkpoint. A failure is remembered for that coverage, so the same
// history is never retried in a loop.
func (e *Engine) compact(ctx context.Context, s Session, b boundModel, reason string) error {
	trigger := "auto"
	if reason == "manual" {
		trigger = "manual"
	}
	// PreCompact hooks are informational: their exit codes never block.
	e.runHooks(ctx, s, "", HookPreCompact, HookInput{Trigger: trigger})
	msgs, err := e.svc.Messages(ctx, s.ID, false)
	if err != nil {
		return err
	}
	prev := e.validCheckpoint(ctx, s, b.route, msgs)
	cut, request := compactionCut(msgs, prev)
	if cut <= 0 {
		return errNothingToCompact
	}
	covered := afterCheckpoint(msgs[:cut], prev)
	through := msgs[cut-1].Seq
	digest := digestMessages(msgs[:cut])
	key := b.route + "/" + digest
	e.mu.Lock()
	failed := e.failedCompactions[key]
	e.mu.Unlock()
	if failed != "" {
		return Errorf(CodeUnavailable, "compaction of this history already failed (%s); not retrying", failed)
	}
	fail := func(err error) error {
		e.mu.Lock()
		e.failedCompactions[key] = ErrorMessage(err)
		e.mu.Unlock()
		return err
	}
	if err := e.persist(ctx, s.ID, EventCompactionStarted, CompactionStartedPayload{Reason: reason, ThroughSeq: through}); err != nil {
		return err
	}
	transcript := renderTranscript(prev, covered)
	req := ProviderRequest{Model: b.model.ID, MaxOutputTokens: compactionOutputCap(b.model.Capabilities), Messages: []ProviderMessage{
		{Role: RoleSystem, Content: []ContentPart{{Type: "text", Text: CompactionPrompt}}},
		{Role: RoleUser, Content: []ContentPart{{Type: "text", Text: transcript}}},
	}}
	before := estimateTokens(len(transcript))
	if prev != nil {
		before = prev.TokensAfter + estimateTokens(len(transcript)-len(prev.Summary))
	}
	var c Completion
	native := false
	if nc, ok := b.provider.(NativeCompactor); ok && HasCapability(b.provider, CapNativeCompactor) {
		var nreq ProviderRequest
		if nreq, err = e.nativeCompactionRequest(b, prev, covered, req); err != nil {
			return fail(err)
		}
		c, err = nc.CompactContext(ctx, b.endpoint, nreq)
		native = true
		var perr *ProviderError
		if err != nil && errors.As(err, &perr) && perr.Category == ProviderUnavailable {
			// The endpoint offers no native compaction (or it is off for
			// the connection): the portable summary instead.
			e.log.Info("native compaction unavailable; using the portable checkpoint", "session_id", s.ID, "reason", perr.Message)
			native, err = false, nil
		} else if err == nil && len(c.State) > 0 && strings.TrimSpace(c.Text) == "" {
			c.Text = nativeCheckpointText
		}
	}
	if !native {
		if dc, ok := b.provider.(DetailedCompleter); ok && HasCapability(b.provider, CapDetailedCompleter) {
			c, err = dc.CompleteDetailed(ctx, b.endpoint, req)
		} else if HasCapability(b.provider, CapCompleter) {
			c, err = b.provider.Complete(ctx, b.endpoint, req)
		} else {
			return fail(Errorf(CodeUnavailable, "provider %s can neither compact natively nor complete, so the context cannot be compacted", b.conn.ProviderKind))
		}
	}
	if err != nil {
		return fail(providerFailure("summarize for compaction", err, b.endpoint.APIKey))
	}
	e.recordUsage(ctx, s.ID, b, req, streamResult{text: c.Text, usage: c.Usage}, "compaction")
	summary := strings.TrimSpace(c.Text)
	if request != nil {
		// The cut is inside the current turn: the request it works on is
		// carried verbatim, whatever the summary says.
		summary = "The user's current request, verbatim:\n" + request.Text + "\n\n" + summary
	}
	if c.FinishReason == "length" {
		return fail(Errorf(CodeProviderError, "the compaction summary was cut off by the output limit"))
	}
	after := estimateTokens(len(summary))
	if native && len(c.State) > 0 && c.Usage != nil && c.Usage.OutputTokens > 0 {
		after = c.Usage.OutputTokens // the opaque state is what the model reads
	}
	// A native checkpoint is trusted to save room: the service made it to
	// fit its own window, and a local estimate of opaque state is moot.
	nativeState := native && len(c.State) > 0
	if summary == "" || (after >= before && !nativeState) {
		return fail(Errorf(CodeProviderError, "the compaction summary would save nothing (%d tokens for %d)", after, before))
	}
	cp := CheckpointPayload{ThroughSeq: through, Digest: digest, Route: b.route, Summary: summary, TokensBefore: before, TokensAfter: after, Native: native}
	if nativeState {
		if cp.ProviderState = e.newProviderState(s.ID, b.route, c.State); cp.ProviderState == nil {
			return fail(Errorf(CodeProviderError, "the native checkpoint is larger than %d bytes", MaxProviderState))
		}
	}
	if err := e.persist(ctx, s.ID, EventCompactionCheckpoint, cp); err != nil {
		return err
	}
	e.log.Info("context compacted", "session_id", s.ID, "reason", reason, "through_seq", through, "tokens_before", before, "tokens_after", after)
	return nil
}

// nativeCheckpointText is the checkpoint summary when a native compactor
// returned only opaque state.
const nativeCheckpointText = "[native checkpoint: the provider keeps this part of the conversation in its own compacted form]"

// nativeCompactionRequest is what a native compactor compacts: the real
// provider view of the covered messages (with their native state on this
// route) after the previous checkpoint, whose own state or summary leads.
func (e *Engine) nativeCompactionRequest(b boundModel, prev *CheckpointPayload, covered []Message, portable ProviderRequest) (ProviderRequest, error) {
	view, err := ProviderView(covered, ViewOptions{DropImages: true, Route: b.route})
	if err != nil {
		return ProviderRequest{}, err
	}
	req := ProviderRequest{Model: b.model.ID, Messages: view}
	if prev != nil {
		if st := prev.ProviderState.stateFor(b.route); st != nil {
			req.State = st
		} else {
			head := ProviderMessage{Role: RoleSystem, Content: []ContentPart{{Type: "text", Text: fmt.Sprintf(checkpointIntro, prev.ThroughSeq) + prev.Summary}}}
			req.Messages = append([]ProviderMessage{head}, req.Messages...)
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
func compactionCut(msgs []Message, prev *CheckpointPayload) (cut int, request *Message) {
	last := -1
	for i, m := range msgs {
		if m.Role == RoleUser {
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
		if msgs[i].Role == RoleAssistant {
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
func renderTranscript(prev *CheckpointPayload, msgs []Message) string {
	var b strings.Builder
	if prev != nil {
		b.WriteString("Summary of the conversation before this part:\n")
		b.WriteString(prev.Summary)
		b.WriteString("\n\nThe conversation continued:\n\n")
	}
	for _, m := range msgs {
		switch m.Role {
		case RoleUser:
			fmt.Fprintf(&b, "[user] %s\n", m.Text)
			for _, a := range m.Attachments {
				fmt.Fprintf(&b, "[user attached %s (%s)]\n", a.Name, a.MediaType)
			}
		case RoleAssistant:
			if m.Text != "" {
				fmt.Fprintf(&b, "[assistant] %s\n", m.Text)
			}
			if m.Interrupted {
				b.WriteString("[the user interrupted this reply]\n")
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "[assistant called %s with %s]\n", c.Name, truncateRunes(string(c.Input), 2000))
			}
		case RoleTool:
			status := "result"
			if m.IsError {
				status = "error"
			}
			fmt.Fprintf(&b, "[%s %s] %s\n", m.ToolName, status, truncateRunes(m.Text, 2000))
		case RoleSystem:
			fmt.Fprintf(&b, "[kernel context] %s\n", m.Text)
		}
	}
	return b.String()
}

// CompactSession compacts on request (phase compaction). Input arriving
// meanwhile is queued; a running turn is a CONFLICT.
func (e *Engine) CompactSession(ctx context.Context, sessionID string) (Session, error) {
	s, err := e.svc.Session(ctx, sessionID)
	if err != nil {
		return Session{}, err
	}
	b, err := e.resolveModel(ctx, s)
	if err != nil {
		return Session{}, err
	}
	rt := e.runtime(sessionID)
	rt.mu.Lock()
	switch {
	case rt.turn != nil:
		rt.mu.Unlock()
		return Session{}, Errorf(CodeConflict, "session %s is running a turn; stop it or wait for it to end before compacting", sessionID)
	case rt.busy != "":
		rt.mu.Unlock()
		return Session{}, Errorf(CodeConflict, "session %s is busy (%s)", sessionID, rt.busy)
	}
	rt.busy = "compaction"
	rt.mu.Unlock()

	pctx := context.WithoutCancel(ctx)
	cerr := e.svc.SetPhase(pctx, sessionID, PhaseCompaction, "compactSession")
	if cerr == nil {
		cerr = e.compact(ctx, s, b, "manual")
		if err := e.svc.SetPhase(pctx, sessionID, PhaseIdle, ""); err != nil && cerr == nil {
			cerr = err
		}
	}
	rt.mu.Lock()
	rt.busy = ""
	if !rt.held && rt.turn == nil && e.dispatchLocked(pctx, sessionID, rt) {
		e.snapshotLocked(sessionID, rt)
	}
	rt.mu.Unlock()
	if cerr != nil {
		return Session{}, cerr
	}
	return e.svc.Session(ctx, sessionID)
}

// ContextUsage estimates what the session's next request would take.
func (e *Engine) ContextUsage(ctx context.Context, sessionID string) (ContextUsage, error) {
	s, err := e.svc.Session(ctx, sessionID)
	if err != nil {
		return ContextUsage{}, err
	}
	b, err := e.resolveModel(ctx, s)
	if err != nil {
		return ContextUsage{Limit: DefaultInputBudget, Estimated: true}, nil
	}
	c, err := e.compile(ctx, s, b, false)
	if err != nil {
		return ContextUsage{}, err
	}
	return c.usage, nil
}

// MaxCompactionOutputTokens bounds a compaction summary's output.
const MaxCompactionOutputTokens = 8192

// compactionOutputCap is the output limit of a compaction request: at most
// MaxCompactionOutputTokens, and never more than the model's declared
// maximum output.
func compactionOutputCap(c Capabilities) int64 {
	n := int64(MaxCompactionOutputTokens)
	if c.MaxOutputTokens != nil && *c.MaxOutputTokens > 0 && *c.MaxOutputTokens < n {
		n = *c.MaxOutputTokens
	}
	return n
}
