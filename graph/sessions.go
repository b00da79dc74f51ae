package graph

import (
	"context"
	"errors"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/graph/model"
)

// The resolvers of sessions: creating and listing them, their events, and
// the Session fields that look something up.

// createSession serves createSession. The session's MCP servers are
// checked before it is created; if one cannot be attached after all (only
// a concurrent change gets there), the session is deleted again, so
// nothing is left half-created.
func (r *Resolver) createSession(ctx context.Context, input model.CreateSessionInput) (*core.Session, error) {
	servers := make([]core.MCPServerInput, len(input.McpServers))
	for i, in := range input.McpServers {
		servers[i] = mcpServerInput(in)
	}
	if len(servers) > 0 {
		if r.MCP == nil {
			return nil, errNoMCP()
		}
		if err := r.MCP.ValidateSessionServers(servers); err != nil {
			return nil, err
		}
	}
	s, err := r.newSession(ctx, core.CreateSessionInput{
		ConnectionID: deref(input.ConnectionID), Model: deref(input.Model), ProjectID: deref(input.ProjectID),
		ApprovalMode: deref(input.ApprovalMode), ReasoningEffort: deref(input.ReasoningEffort),
		Title: deref(input.Title), AgentMode: deref(input.AgentMode),
		FallbackModels: input.FallbackModels,
	}, input.Worktree)
	if err != nil {
		return nil, err
	}
	for _, in := range servers {
		if _, err := r.MCP.AttachSession(ctx, s.ID, in); err != nil {
			yes := true // a session never used: its worktree and branch go too
			if _, derr := r.deleteSession(context.WithoutCancel(ctx), s.ID, &yes, &yes); derr != nil {
				r.Log.Error("delete a session whose MCP servers could not be attached", "session_id", s.ID, "err", derr)
			}
			return nil, err
		}
	}
	return &s, nil
}

func updateSessionInput(in model.UpdateSessionInput) core.UpdateSessionInput {
	return core.UpdateSessionInput{
		Title: in.Title, Pinned: in.Pinned, ConnectionID: in.ConnectionID, Model: in.Model,
		ReasoningEffort: in.ReasoningEffort, ApprovalMode: in.ApprovalMode, AgentMode: in.AgentMode,
		ProjectID: in.ProjectID, FallbackModels: fallbackModelsInput(in.FallbackModels),
	}
}

// sessions serves Query.sessions.
func sessions(ctx context.Context, svc *session.Service, includeChildren *bool, first *int64, after *string) ([]core.Session, error) {
	f, err := sessionPage(first, after)
	if err != nil {
		return nil, err
	}
	f.IncludeChildren = deref(includeChildren)
	return svc.Sessions(ctx, f)
}

// events serves Query.events: a page of the session's events (500 unless
// limit says otherwise).
func events(ctx context.Context, svc *session.Service, sessionID string, afterSeq, limit *int64) ([]model.SessionEvent, error) {
	after, n := int64(0), int64(500)
	if afterSeq != nil {
		after = *afterSeq
	}
	if limit != nil {
		n = *limit
	}
	if n > session.MaxEventPage {
		n = session.MaxEventPage + 1 // let the service reject it with its message
	}
	evs, err := svc.Events(ctx, sessionID, after, int(n))
	if err != nil {
		return nil, err
	}
	out := make([]model.SessionEvent, len(evs))
	for i, ev := range evs {
		out[i] = model.SessionEvent{Event: ev}
	}
	return out, nil
}

// exportSession serves exportSession: the session as a foya.session
// document.
func exportSession(ctx context.Context, e *engine.Engine, id string) (string, error) {
	data, err := e.Archive().Export(ctx, id, MaxExportBytes)
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// kernelEventSession is KernelEvent.session: null for a deleted session
// or one that is gone by now.
func kernelEventSession(ctx context.Context, svc *session.Service, ev *core.KernelEvent) (*core.Session, error) {
	if ev.SessionID == "" || ev.Type == core.KernelSessionDeleted {
		return nil, nil
	}
	return optional(svc.Session(ctx, ev.SessionID))
}

// sessionRoute is Session.route: the route key of the session's
// connection and model, null without them or once the connection is gone.
func sessionRoute(ctx context.Context, cat *catalog.Catalog, s *core.Session) (*string, error) {
	if s.ConnectionID == "" || s.Model == "" {
		return nil, nil
	}
	conn, err := cat.Connection(ctx, s.ConnectionID)
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	key := core.RouteKey(conn, s.Model)
	return &key, nil
}

// sessionProject is Session.project: null without one or once it is gone.
func sessionProject(ctx context.Context, svc *session.Service, s *core.Session) (*core.Project, error) {
	if s.ProjectID == "" {
		return nil, nil
	}
	return optional(svc.Project(ctx, s.ProjectID))
}

// sessionQueue is Session.queue, answered by the node that owns the
// session.
func sessionQueue(ctx context.Context, e *engine.Engine, sessionID string) ([]core.QueueItem, error) {
	if st, remote, err := remoteSessionState(ctx, sessionID); remote || err != nil {
		if st.Queue == nil {
			st.Queue = []core.QueueItem{}
		}
		return st.Queue, err
	}
	return e.Queues().List(sessionID), nil
}

// sessionContextUsage is Session.contextUsage, answered by the node that
// owns the session.
func sessionContextUsage(ctx context.Context, e *engine.Engine, sessionID string) (*core.ContextUsage, error) {
	if st, remote, err := remoteSessionState(ctx, sessionID); err != nil {
		return nil, err
	} else if remote {
		if st.Error != "" {
			return nil, &core.Error{Code: core.Code(st.Code), Message: st.Error}
		}
		return st.ContextUsage, nil
	}
	return ptr(e.ContextUsage(ctx, sessionID))
}
