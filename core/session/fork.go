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
	forker, inStore := s.store.(core.HistoryForker)
	var msgs []core.Message
	if inStore {
		err = s.checkForkBoundary(ctx, sourceID, afterSeq)
	} else if msgs, err = s.store.Messages(ctx, sourceID, false); err == nil {
		err = validForkBoundary(msgs, afterSeq)
	}
	if err != nil {
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
	if err := s.ClaimNew(ctx, meta.ID); err != nil {
		return core.Session{}, err
	}
	unlock := s.Lock(meta.ID)
	var imported int64
	if inStore {
		imported, err = s.forkInStore(ctx, forker, created, sourceID, afterSeq)
	} else {
		imported, err = s.forkThroughKernel(ctx, created, msgs, afterSeq)
	}
	unlock()
	if err != nil {
		return core.Session{}, fmt.Errorf("fork session %s: %w", sourceID, err)
	}
	s.broker.PublishKernel(core.KernelEvent{Type: core.KernelSessionCreated, SessionID: meta.ID, At: created.At})
	s.log.Info("session forked", "session_id", meta.ID, "source", sourceID, "after_seq", afterSeq, "messages", imported)
	return s.store.Session(ctx, meta.ID)
}

// forkInStore writes the fork through the store's HistoryForker: the
// messages never leave the database. Nobody can subscribe to the new
// session before this returns its id, so only session_created is
// published (the history cache loads the session on first use).
func (s *Service) forkInStore(ctx context.Context, f core.HistoryForker, created core.Event, sourceID string, afterSeq int64) (int64, error) {
	if err := s.fence(ctx, created.SessionID); err != nil {
		return 0, err
	}
	head, err := f.ForkHistory(ctx, created, sourceID, afterSeq)
	if err != nil {
		return 0, err
	}
	created.Seq = 1
	s.broker.Publish(created)
	return head - 1, nil
}

// forkThroughKernel appends the fork's events one by one (a store
// without HistoryForker).
func (s *Service) forkThroughKernel(ctx context.Context, created core.Event, msgs []core.Message, afterSeq int64) (int64, error) {
	events := []core.Event{created}
	for _, m := range msgs {
		if m.Seq > afterSeq {
			break
		}
		m.Seq, m.Active = 0, false
		ev, err := core.NewEvent(created.SessionID, core.EventMessageImported, core.MessagePayload{Message: m})
		if err != nil {
			return 0, err
		}
		events = append(events, ev)
	}
	if _, err := s.Commit(ctx, created.SessionID, 0, events...); err != nil {
		return 0, err
	}
	return int64(len(events) - 1), nil
}

// forkWindow is how many messages checkForkBoundary reads at a time.
const forkWindow = 64

// checkForkBoundary checks afterSeq as validForkBoundary does, reading only
// the messages that decide it: those from the last assistant message at
// or before afterSeq (forkBoundaries forgets everything before an
// assistant message). Only a refusal, to name the nearest valid points,
// reads the whole session.
func (s *Service) checkForkBoundary(ctx context.Context, sourceID string, afterSeq int64) error {
	var window []core.Message
	before := afterSeq + 1
	for before > 1 {
		page, err := s.store.MessagePage(ctx, sourceID, core.MessageQuery{Last: true, BeforeSeq: before, Limit: forkWindow})
		if err != nil {
			return err
		}
		window = append(page, window...)
		if len(page) < forkWindow || slices.ContainsFunc(page, func(m core.Message) bool { return m.Role == core.RoleAssistant }) {
			break
		}
		before = page[0].Seq
	}
	if slices.Contains(forkBoundaries(window), afterSeq) {
		return nil
	}
	msgs, err := s.store.Messages(ctx, sourceID, false)
	if err != nil {
		return err
	}
	return validForkBoundary(msgs, afterSeq)
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
