package engine

import (
	"log/slog"
	"sync"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
)

// maxDecided bounds how many answered request ids are remembered for CONFLICT
// replies; older ones then answer NOT_FOUND.
const maxDecided = 10000

// Requests holds the approvals and questions waiting for a person, the ids
// already answered or cancelled (so a late answer gets CONFLICT), and the
// per-session grants of APPROVED_FOR_SESSION. It has its own lock.
type Requests struct {
	svc *session.Service
	log *slog.Logger

	mu           sync.Mutex
	pending      map[string]*pendingRequest // by request id
	decided      map[string]bool
	decidedOrder []string
	grants       map[string]map[string]bool // session id → tool/action
}

func newRequests(svc *session.Service, log *slog.Logger) *Requests {
	return &Requests{svc: svc, log: log, pending: map[string]*pendingRequest{}, decided: map[string]bool{}, grants: map[string]map[string]bool{}}
}

// granted reports whether the session holds a grant for key (tool/action).
func (r *Requests) granted(sessionID, key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.grants[sessionID][key]
}

// add registers a pending request.
func (r *Requests) add(id string, p *pendingRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending[id] = p
}

// remove forgets a pending request (its waiter returned).
func (r *Requests) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pending, id)
}

// abandon claims a request whose waiter gave up (its context ended); it
// reports whether an answer had claimed it first.
func (r *Requests) abandon(id string, p *pendingRequest) (taken bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.taken {
		return true
	}
	p.taken = true
	delete(r.pending, id)
	if !r.decided[id] {
		r.markDecidedLocked(id)
	}
	return false
}

// take claims a pending request for an answer: the first answer wins, later
// ones (from any client) get CONFLICT. A sub-agent's request may be answered
// through its own session or its parent. grant records, in the same step, an
// APPROVED_FOR_SESSION grant for the session that asked (a child's grant
// does not widen its parent's).
func (r *Requests) take(sessionID, id, kind string, grant bool) (*pendingRequest, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pending[id]
	if !ok || (p.sessionID != sessionID && p.parentID != sessionID) || p.kind != kind || p.taken {
		if r.decided[id] {
			return nil, core.Errorf(core.CodeConflict, "%s %s was already answered or cancelled", kind, id)
		}
		return nil, core.Errorf(core.CodeNotFound, "no pending %s %s in session %s", kind, id, sessionID)
	}
	p.taken = true
	delete(r.pending, id)
	r.markDecidedLocked(id)
	if grant {
		a := p.payload.(core.ApprovalPayload)
		if r.grants[p.sessionID] == nil {
			r.grants[p.sessionID] = map[string]bool{}
		}
		r.grants[p.sessionID][a.Tool+"/"+a.Action] = true
	}
	return p, nil
}

// cancelSession stops a session's pending requests from being answered;
// their waiters end with the turn's context and record the cancellation.
func (r *Requests) cancelSession(sessionID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, p := range r.pending {
		if p.sessionID == sessionID {
			delete(r.pending, id)
			r.markDecidedLocked(id)
		}
	}
}

// forgetGrants drops the grants of the given sessions.
func (r *Requests) forgetGrants(sessionIDs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range sessionIDs {
		delete(r.grants, id)
	}
}

// markDecidedLocked remembers an answered request id; r.mu is held.
func (r *Requests) markDecidedLocked(id string) {
	r.decided[id] = true
	r.decidedOrder = append(r.decidedOrder, id)
	if len(r.decidedOrder) > maxDecided {
		delete(r.decided, r.decidedOrder[0])
		r.decidedOrder = r.decidedOrder[1:]
	}
}
