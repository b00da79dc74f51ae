package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Ownership decides which kernel of several sharing one database runs a
// session: the owner holds a lease in the database, renews it while it
// lives, and loses it a few seconds after it dies. Only the owner runs the
// session's turns, queue, approvals, questions and compaction. A kernel
// alone on its database has no Ownership: it owns every session.
type Ownership interface {
	// Acquire returns the session's owner, making this node the owner when
	// the session has none or its owner's lease expired.
	Acquire(ctx context.Context, sessionID string) (Owner, error)
	// Lookup returns the session's owner without taking the session; a
	// session without a live owner is reported as local.
	Lookup(ctx context.Context, sessionID string) (Owner, error)
	// Release gives the session up (it was deleted).
	Release(ctx context.Context, sessionID string)
	// Holds reports, without a database round trip, whether this node
	// certainly still holds the session's lease: it was confirmed recently
	// enough that it cannot have expired. Appends are refused otherwise,
	// so a node cut off longer than the lease never writes beside the
	// node that took its sessions over.
	Holds(sessionID string) bool
}

// Owner is the node that runs a session.
type Owner struct {
	NodeID string
	// URL is the owner's advertise URL (empty when local).
	URL string
	// Local: this node is the owner.
	Local bool
	// Acquired: this call made this node the owner (a new session, or one
	// taken over from a node whose lease expired).
	Acquired bool
}

// EventRelay carries the events published on this node to the other nodes
// of a cluster. Both methods must return at once (they are called on the
// publishing path).
type EventRelay interface {
	RelaySession(ev Event)
	RelayKernel(ev KernelEvent)
}

// OwnerBatch is implemented by an Ownership that looks many sessions up
// in one round trip.
type OwnerBatch interface {
	// LookupMany returns the owners of the sessions owned by another live
	// node; the others (local, or without a live owner) are left out.
	LookupMany(ctx context.Context, sessionIDs []string) (map[string]Owner, error)
}

// LookupSessions returns the remote owners of sessions, as Lookup would
// (sessions this node answers for are left out).
func (s *Service) LookupSessions(ctx context.Context, ids []string) (map[string]Owner, error) {
	out := map[string]Owner{}
	if s.own == nil || len(ids) == 0 {
		return out, nil
	}
	if b, ok := s.own.(OwnerBatch); ok {
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

// NodeInfo describes one kernel process serving the database.
type NodeInfo struct {
	ID            string
	AdvertiseURL  string
	StartedAt     time.Time
	LastHeartbeat time.Time
	SessionsOwned int
}

// NodeLister lists the kernel processes serving the database.
type NodeLister interface {
	Nodes(ctx context.Context) ([]NodeInfo, error)
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
func (s *Service) AcquireSession(ctx context.Context, sessionID string) (Owner, error) {
	if s.own == nil {
		return Owner{Local: true}, nil
	}
	defer s.acquireLock(sessionID)()
	if _, err := s.store.Session(ctx, sessionID); errors.Is(err, ErrNotFound) {
		return Owner{Local: true}, nil
	} else if err != nil {
		return Owner{}, err
	}
	o, err := s.own.Acquire(ctx, sessionID)
	if err != nil {
		return Owner{}, fmt.Errorf("acquire session %s: %w", sessionID, err)
	}
	if o.Local && o.Acquired {
		if err := s.recoverSession(ctx, sessionID, "its owner node stopped"); err != nil {
			return Owner{}, err
		}
	}
	return o, nil
}

// claimNew makes this node the owner of a session it is about to create.
func (s *Service) claimNew(ctx context.Context, sessionID string) error {
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
	return Errorf(CodeUnavailable, "this kernel no longer owns session %s (its lease lapsed); retry, and the command goes to the session's owner", sessionID)
}

// LookupSession returns the owner of a session without taking it.
func (s *Service) LookupSession(ctx context.Context, sessionID string) (Owner, error) {
	if s.own == nil {
		return Owner{Local: true}, nil
	}
	return s.own.Lookup(ctx, sessionID)
}

// recoverSession ends the turn a stopped kernel left open and sets the
// phase back to idle; a session that is idle is left alone.
func (s *Service) recoverSession(ctx context.Context, id, why string) error {
	sess, err := s.store.Session(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if sess.Phase == PhaseIdle || sess.Phase == "" {
		return nil
	}
	var evs []Event
	if open := s.unfinishedTurn(ctx, id); open != "" {
		ev, err := NewEvent(id, EventTurnFinished, TurnPayload{TurnID: open, Status: TurnCancelled,
			Reason: "the kernel stopped during the turn; completed messages are kept"})
		if err != nil {
			return err
		}
		evs = append(evs, ev)
	}
	ev, err := NewEvent(id, EventPhaseChanged, PhasePayload{Phase: PhaseIdle, Reason: "kernel restarted"})
	if err != nil {
		return err
	}
	if _, err := s.Append(ctx, id, append(evs, ev)...); err != nil {
		return fmt.Errorf("reset phase of %s: %w", id, err)
	}
	s.log.Info("session phase reset to idle after restart", "session_id", id, "was", sess.Phase, "because", why)
	return nil
}
