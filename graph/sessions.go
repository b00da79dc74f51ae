package graph

import (
	"context"
	"errors"
	"slices"

	"github.com/99designs/gqlgen/graphql"

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
	r := listReadOf(ctx)
	f.Usage, f.IDsOnly, f.Into = r.usage, r.idsOnly, r.into
	return svc.Sessions(ctx, f)
}

// listRead is what a session list is read for: Session.usage (the store
// reads the totals with the sessions, core.SessionFilter.Usage, rather
// than the usage resolver summing the ledger; a list without usage reads
// none), or nothing but the ids (core.SessionFilter.IDsOnly: the store
// answers from its index); and into, the array the page may be read into
// (core.SessionFilter.Into, from the list written by hand's pool).
type listRead struct {
	usage, idsOnly bool
	into           []core.Session
}

// listReadKey marks a context whose session list says itself what it is
// read for (the list written by hand).
type listReadKey struct{}

// listReadOf is what the sessions field being resolved selects.
func listReadOf(ctx context.Context) listRead {
	if r, ok := ctx.Value(listReadKey{}).(listRead); ok {
		return r
	}
	if graphql.GetFieldContext(ctx) == nil {
		return listRead{}
	}
	r := listRead{idsOnly: true}
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{"Session"}) {
		switch f.Name {
		case "usage":
			r.usage = true
		case "id", "__typename":
			continue
		}
		r.idsOnly = false
	}
	return r
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

// The Session fields below that look something up are batch resolvers:
// gqlgen hands them every session of a list at once (a page of
// sessions(first:, after:), the children of a session), and each does
// one lookup for all of them instead of one per session.

// sessionRoutes is Session.route: the route key of each session's
// connection and model, null without them or once the connection is gone.
// Each connection is looked up once.
func sessionRoutes(ctx context.Context, cat *catalog.Catalog, objs []*core.Session) ([]*string, error) {
	out := make([]*string, len(objs))
	conns := map[string]*core.Connection{} // nil: gone
	for i, s := range objs {
		if s.ConnectionID == "" || s.Model == "" {
			continue
		}
		conn, seen := conns[s.ConnectionID]
		if !seen {
			c, err := cat.Connection(ctx, s.ConnectionID)
			switch {
			case errors.Is(err, core.ErrNotFound):
			case err != nil:
				return nil, err
			default:
				conn = &c
			}
			conns[s.ConnectionID] = conn
		}
		if conn != nil {
			key := core.RouteKey(*conn, s.Model)
			out[i] = &key
		}
	}
	return out, nil
}

// sessionProjects is Session.project: null without one or once it is
// gone. A few distinct projects are read one by one, more in one list of
// every project.
func sessionProjects(ctx context.Context, svc *session.Service, objs []*core.Session) ([]*core.Project, error) {
	const fewProjects = 4
	out := make([]*core.Project, len(objs))
	projects := map[string]*core.Project{} // nil: gone
	for _, s := range objs {
		if s.ProjectID != "" {
			projects[s.ProjectID] = nil
		}
	}
	if len(projects) > fewProjects {
		all, err := svc.Projects(ctx)
		if err != nil {
			return nil, err
		}
		for i := range all {
			if _, ok := projects[all[i].ID]; ok {
				projects[all[i].ID] = &all[i]
			}
		}
	} else {
		for id := range projects {
			p, err := optional(svc.Project(ctx, id))
			if err != nil {
				return nil, err
			}
			projects[id] = p
		}
	}
	for i, s := range objs {
		if s.ProjectID != "" {
			out[i] = projects[s.ProjectID]
		}
	}
	return out, nil
}

// sessionChildren is Session.children: each session's children, newest
// first, read in one list.
func sessionChildren(ctx context.Context, svc *session.Service, objs []*core.Session) ([][]core.Session, error) {
	out := make([][]core.Session, len(objs))
	if len(objs) == 1 {
		children, err := svc.Sessions(ctx, core.SessionFilter{ParentID: objs[0].ID})
		out[0] = children
		return out, err
	}
	at := make(map[string][]int, len(objs)) // a session may be listed twice
	ids := make([]string, 0, len(objs))
	for i, s := range objs {
		if _, ok := at[s.ID]; !ok {
			ids = append(ids, s.ID)
		}
		at[s.ID] = append(at[s.ID], i)
		out[i] = []core.Session{}
	}
	var all []core.Session
	for chunk := range slices.Chunk(ids, 500) {
		children, err := svc.Sessions(ctx, core.SessionFilter{ParentIDs: chunk})
		if err != nil {
			return nil, err
		}
		all = append(all, children...)
	}
	// all is newest first, so each session's children stay in that order.
	for _, c := range all {
		for _, i := range at[c.ParentID] {
			out[i] = append(out[i], c)
		}
	}
	return out, nil
}

// sessionUsage is Session.usage: each session's totals as the store read
// them with the session (core.Session.UsageTotals), else from the usage
// ledger, in one read when the ledger can.
func sessionUsage(ctx context.Context, ledger core.UsageStore, objs []*core.Session) ([]*core.Usage, error) {
	out := make([]*core.Usage, len(objs))
	read := true
	for i, s := range objs {
		if s.UsageTotals == nil {
			read = false
			break
		}
		u := *s.UsageTotals
		out[i] = &u
	}
	if read {
		return out, nil
	}
	if many, ok := ledger.(core.SessionUsageTotals); ok && len(objs) > 1 {
		ids := make([]string, len(objs))
		for i, s := range objs {
			ids[i] = s.ID
		}
		totals, err := many.SessionUsageTotals(ctx, ids)
		if err != nil {
			return nil, err
		}
		for i, s := range objs {
			u := totals[s.ID]
			out[i] = &u
		}
		return out, nil
	}
	for i, s := range objs {
		u, err := ledger.UsageTotals(ctx, s.ID)
		if err != nil {
			return nil, err
		}
		out[i] = &u
	}
	return out, nil
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
