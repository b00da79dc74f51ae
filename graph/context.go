package graph

import (
	"context"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/graph/model"
)

// What the edge may put in an operation's context for the resolvers: the
// transport's resumable event stream (SSE) and the state of the sessions
// other nodes own (cluster forwarding). Both are interfaces the edge
// implements, so that this package knows nothing of HTTP.

// EventStream is a transport that resumes session event streams (SSE with
// its Last-Event-ID header) and labels their frames with event seqs.
type EventStream interface {
	// ResumeAfter is the seq sessionEvents resumes after, given its
	// afterSeq argument.
	ResumeAfter(afterSeq *int64) (*int64, error)
	// Sent records the seq of a persisted event, in order, before the
	// event is handed to the executor.
	Sent(seq int64)
}

type eventStreamKey struct{}

// WithEventStream makes the sessionEvents subscriptions run under ctx
// resumable through s.
func WithEventStream(ctx context.Context, s EventStream) context.Context {
	return context.WithValue(ctx, eventStreamKey{}, s)
}

// subscribeSessionEvents runs sessionEvents, resumable when its transport
// is (WithEventStream).
func subscribeSessionEvents(ctx context.Context, svc *session.Service, sessionID string, afterSeq *int64) (<-chan *model.SessionEvent, error) {
	st, _ := ctx.Value(eventStreamKey{}).(EventStream)
	if st == nil {
		return session.SubscribeAs(ctx, svc, sessionID, afterSeq, model.NewSessionEvent)
	}
	after, err := st.ResumeAfter(afterSeq)
	if err != nil {
		return nil, err
	}
	return session.SubscribeAs(ctx, svc, sessionID, after, func(ev core.Event) *model.SessionEvent {
		st.Sent(ev.Seq) // before the hand-off: the frame is written after it
		return model.NewSessionEvent(ev)
	})
}

// SessionState is one session's in-memory state, as the node that owns it
// reports it (the JSON nodes exchange).
type SessionState struct {
	Queue        []core.QueueItem   `json:"queue"`
	ContextUsage *core.ContextUsage `json:"contextUsage,omitempty"`
	Error        string             `json:"error,omitempty"`
	Code         string             `json:"code,omitempty"`
}

// RemoteStates answers, for one operation, the in-memory state of the
// sessions other nodes own.
type RemoteStates interface {
	// SessionState returns the state of a session another node owns; ok
	// is false when this node answers for it.
	SessionState(ctx context.Context, id string) (st SessionState, ok bool, err error)
}

type remoteStatesKey struct{}

// WithRemoteStates makes the resolvers under ctx answer a session's queue
// and context usage from rs when another node owns the session.
func WithRemoteStates(ctx context.Context, rs RemoteStates) context.Context {
	return context.WithValue(ctx, remoteStatesKey{}, rs)
}

// remoteSessionState returns the state of a session another node owns;
// ok is false when this node answers for it.
func remoteSessionState(ctx context.Context, id string) (st SessionState, ok bool, err error) {
	rs, _ := ctx.Value(remoteStatesKey{}).(RemoteStates)
	if rs == nil {
		return SessionState{}, false, nil
	}
	return rs.SessionState(ctx, id)
}
