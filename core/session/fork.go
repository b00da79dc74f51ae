package session

import (
	"context"
	"fmt"
	"github.com/foya-dev/foya/core"
	"slices"
	"strings"
	"time"
)

// ForkSession branches a session (SES-10): a new top-level session with its
// own id and seq numbering that imports the source's active messages up to
// and including afterSeq as message_imported events, with the source's
// connection, model, project, approval mode and reasoning effort. Nothing
// else is copied: no queue, approvals, questions, grants, running tools,
// sub-agent state, source seqs or compaction checkpoints. It reads what is
// persisted, so it works while the source runs a turn. The new session and
// its history are written in one transaction. opts carries what the
// kernel set up for the branch first (its id and git worktree).
func (s *Service) ForkSession(ctx context.Context, sourceID string, afterSeq int64, opts ForkOptions) (core.Session, error) {
	src, err := s.store.Session(ctx, sourceID)
	if err != nil {
		return core.Session{}, err
	}
	msgs, err := s.store.Messages(ctx, sourceID, false)
	if err != nil {
		return core.Session{}, err
	}
	if err := validForkBoundary(msgs, afterSeq); err != nil {
		return core.Session{}, err
	}
	meta := core.SessionMeta{
		ID: core.NewID("ses"), ProjectID: src.ProjectID, ConnectionID: src.ConnectionID, Model: src.Model,
		ReasoningEffort: src.ReasoningEffort, ApprovalMode: src.ApprovalMode, AgentMode: core.AgentExecute,
		Source: "fork:" + sourceID, CreatedAt: time.Now().UTC(),
		FallbackModels: append([]core.ModelRef(nil), src.FallbackModels...),
		Worktree:       opts.Worktree,
	}
	if opts.ID != "" {
		meta.ID = opts.ID
	}
	if src.Title != "" {
		meta.Title = core.TruncateRunes(src.Title+" (branch)", core.MaxTitleLen, "")
	}
	created, err := core.NewEvent(meta.ID, core.EventSessionCreated, core.SessionPayload{Session: meta})
	if err != nil {
		return core.Session{}, err
	}
	events := []core.Event{created}
	for _, m := range msgs {
		if m.Seq > afterSeq {
			break
		}
		m.Seq, m.Active = 0, false
		ev, err := core.NewEvent(meta.ID, core.EventMessageImported, core.MessagePayload{Message: m})
		if err != nil {
			return core.Session{}, err
		}
		events = append(events, ev)
	}
	if err := s.ClaimNew(ctx, meta.ID); err != nil {
		return core.Session{}, err
	}
	unlock := s.Lock(meta.ID)
	_, err = s.Commit(ctx, meta.ID, 0, events...)
	unlock()
	if err != nil {
		return core.Session{}, fmt.Errorf("fork session %s: %w", sourceID, err)
	}
	s.broker.PublishKernel(core.KernelEvent{Type: core.KernelSessionCreated, SessionID: meta.ID, At: created.At})
	s.log.Info("session forked", "session_id", meta.ID, "source", sourceID, "after_seq", afterSeq, "messages", len(events)-1)
	return s.store.Session(ctx, meta.ID)
}

// ForkOptions are what the kernel set up for a branch before ForkSession
// writes it; the zero value: a new id, no worktree.
type ForkOptions struct {
	// ID is the branch's session id; empty: a new one.
	ID string
	// Worktree is the git worktree made for the branch (core/worktree).
	Worktree *core.Worktree
}

// ValidForkBoundary checks that afterSeq is a seq a session whose active
// messages are msgs may be branched after (BAD_INPUT names the nearest
// valid ones otherwise).
func ValidForkBoundary(msgs []core.Message, afterSeq int64) error {
	return validForkBoundary(msgs, afterSeq)
}

// forkBoundaries lists the seqs a fork may stop after: a complete assistant
// message without tool calls, or a tool result after which every call of its
// assistant message has its result.
func forkBoundaries(msgs []core.Message) []int64 {
	var out []int64
	pending := map[string]bool{}
	for _, m := range msgs {
		switch m.Role {
		case core.RoleAssistant:
			clear(pending)
			for _, c := range m.ToolCalls {
				pending[c.ID] = true
			}
			if len(m.ToolCalls) == 0 {
				out = append(out, m.Seq)
			}
		case core.RoleTool:
			delete(pending, m.ToolCallID)
			if len(pending) == 0 {
				out = append(out, m.Seq)
			}
		}
	}
	return out
}

func validForkBoundary(msgs []core.Message, afterSeq int64) error {
	valid := forkBoundaries(msgs)
	if slices.Contains(valid, afterSeq) {
		return nil
	}
	if len(valid) == 0 {
		return core.Errorf(core.CodeBadInput, "afterSeq %d: the session has no complete assistant reply to branch after yet", afterSeq)
	}
	i, _ := slices.BinarySearch(valid, afterSeq)
	var near []string
	if i > 0 {
		near = append(near, fmt.Sprint(valid[i-1]))
	}
	if i < len(valid) {
		near = append(near, fmt.Sprint(valid[i]))
	}
	return core.Errorf(core.CodeBadInput, "afterSeq %d is not a branch point: branch right after a complete assistant message or the tool result that completes its calls (nearest valid: %s)", afterSeq, strings.Join(near, ", "))
}
