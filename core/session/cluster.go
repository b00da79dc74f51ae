package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/foya-dev/foya/core"
	"sync"
)

// LookupSessions returns the remote owners of sessions, as Lookup would
// (sessions this node answers for are left out).
func (s *Service) LookupSessions(ctx context.Context, ids []string) (map[string]core.Owner, error) {
	out := map[string]core.Owner{}
	if s.own == nil || len(ids) == 0 {
		return out, nil
	}
	if b, ok := s.own.(core.OwnerBatch); ok {
		return b.LookupMany(ctx, ids)
	}
	for _, id := range ids {
		o, err := s.own.Lookup(ctx, id)
		if err != nil {
			return nil, err
		}
		if !o.Local {
			out[id] = o
		}
	}
	return out, nil
}

// Clustered reports whether the service shares its database with other
// kernels (sessions have owners).
func (s *Service) Clustered() bool { return s.own != nil }

// acquireLock serialises the taking over of one session on this node, so a
// command never runs before the recovery of the turn the former owner left.
func (s *Service) acquireLock(sessionID string) func() {
	m, _ := s.acquiring.LoadOrStore(sessionID, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// AcquireSession returns the owner of a session, taking it when it has no
// live owner. A session taken over from a dead node is recovered first
// exactly as at a restart: the interrupted turn ends cancelled and the
// phase goes back to idle. A missing session is reported local (the
// command then fails with NOT_FOUND where it runs).
func (s *Service) AcquireSession(ctx context.Context, sessionID string) (core.Owner, error) {
	if s.own == nil {
		return core.Owner{Local: true}, nil
	}
	defer s.acquireLock(sessionID)()
	if _, err := s.store.Session(ctx, sessionID); errors.Is(err, core.ErrNotFound) {
		return core.Owner{Local: true}, nil
	} else if err != nil {
		return core.Owner{}, err
	}
	o, err := s.own.Acquire(ctx, sessionID)
	if err != nil {
		return core.Owner{}, fmt.Errorf("acquire session %s: %w", sessionID, err)
	}
	if o.Local && o.Acquired {
		if err := s.recoverSession(ctx, sessionID, "its owner node stopped"); err != nil {
			return core.Owner{}, err
		}
	}
	return o, nil
}

// ClaimNew makes this node the owner of a session it is about to create.
func (s *Service) ClaimNew(ctx context.Context, sessionID string) error {
	if s.own == nil {
		return nil
	}
	if _, err := s.own.Acquire(ctx, sessionID); err != nil {
		return fmt.Errorf("take the lease of new session %s: %w", sessionID, err)
	}
	return nil
}

type unfencedKey struct{}

// unfenced marks writes a node may make to sessions it does not own: the
// unbinding of sessions after a catalog change made on this node.
func unfenced(ctx context.Context) context.Context {
	return context.WithValue(ctx, unfencedKey{}, true)
}

// fence refuses an append to a session this node does not hold.
func (s *Service) fence(ctx context.Context, sessionID string) error {
	if s.own == nil || s.own.Holds(sessionID) || ctx.Value(unfencedKey{}) != nil {
		return nil
	}
	return core.Errorf(core.CodeUnavailable, "this kernel no longer owns session %s (its lease lapsed); retry, and the command goes to the session's owner", sessionID)
}

// LookupSession returns the owner of a session without taking it.
func (s *Service) LookupSession(ctx context.Context, sessionID string) (core.Owner, error) {
	if s.own == nil {
		return core.Owner{Local: true}, nil
	}
	return s.own.Lookup(ctx, sessionID)
}

// recoverSession ends the turn a stopped kernel left open and sets the
// phase back to idle; a session that is idle is left alone.
func (s *Service) recoverSession(ctx context.Context, id, why string) error {
	sess, err := s.store.Session(ctx, id)
	if errors.Is(err, core.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if sess.Phase == core.PhaseIdle || sess.Phase == "" {
		return nil
	}
	var evs []core.Event
	if open := s.unfinishedTurn(ctx, id); open != "" {
		ev, err := core.NewEvent(id, core.EventTurnFinished, core.TurnPayload{TurnID: open, Status: core.TurnCancelled,
			Reason: "the kernel stopped during the turn; completed messages are kept"})
		if err != nil {
			return err
		}
		evs = append(evs, ev)
	}
	ev, err := core.NewEvent(id, core.EventPhaseChanged, core.PhasePayload{Phase: core.PhaseIdle, Reason: "kernel restarted"})
	if err != nil {
		return err
	}
	if _, err := s.Append(ctx, id, append(evs, ev)...); err != nil {
		return fmt.Errorf("reset phase of %s: %w", id, err)
	}
	s.log.Info("session phase reset to idle after restart", "session_id", id, "was", sess.Phase, "because", why)
	return nil
}
