package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/cmdutil"
)

// The session foya exec runs its turn in.

// errNoConnection says which command makes exec usable.
func errNoConnection(conns []client.ConnectionsConnectionsConnection) error {
	for _, cn := range conns {
		if cn.Type == client.ConnectionTypeLanguage {
			return fmt.Errorf("connection %q has no models yet: list them with\n  foya connections models %s\nor add one with --model on foya connections add", cn.Name, cn.Name)
		}
	}
	return errors.New("no model connection is configured yet; add one, e.g.\n  " + addConnectionHint)
}

// usable reports whether a new session without --model gets a model.
func usable(resp *client.ConnectionsResponse) bool {
	if resp.DefaultModels.Language != nil {
		return true
	}
	for _, cn := range resp.Connections {
		if cn.Type == client.ConnectionTypeLanguage && len(cn.Models) > 0 {
			return true
		}
	}
	return false
}

// prepareSession creates the session, or loads and adjusts --session or the
// session --continue finds. Nothing is created when no model can serve it.
func prepareSession(ctx context.Context, c *client.Client, o execOptions) (client.SessionFields, nameMap, error) {
	conns, err := client.Connections(ctx, c)
	if err != nil {
		return client.SessionFields{}, nil, err
	}
	names := connectionNames(conns)
	upd, changed, err := sessionChanges(ctx, c, o)
	if err != nil {
		return client.SessionFields{}, nil, err
	}
	existing, err := existingSession(ctx, c, o)
	if err != nil {
		return client.SessionFields{}, nil, err
	}
	if existing != nil {
		if existing.ConnectionId == nil && o.model == "" && !usable(conns) {
			return client.SessionFields{}, nil, errNoConnection(conns.Connections)
		}
		if !changed {
			return *existing, names, nil
		}
		resp, err := client.UpdateSession(ctx, c, existing.Id, upd)
		if err != nil {
			return client.SessionFields{}, nil, err
		}
		return resp.UpdateSession.SessionFields, names, nil
	}
	if o.model == "" && !usable(conns) {
		return client.SessionFields{}, nil, errNoConnection(conns.Connections)
	}
	s, err := createExecSession(ctx, c, o.project, upd, execWorktree(o))
	return s, names, err
}

// sessionChanges is what --model and --approval-mode set on the session;
// changed reports that they set anything.
func sessionChanges(ctx context.Context, c *client.Client, o execOptions) (upd client.UpdateSessionInput, changed bool, err error) {
	if o.model != "" {
		conn, m, _ := strings.Cut(o.model, "/")
		cn, err := resolveConnection(ctx, c, conn)
		if err != nil {
			return upd, false, err
		}
		upd.ConnectionId, upd.Model, changed = &cn.Id, &m, true
	}
	if o.approval != "" {
		mode := client.ApprovalMode(o.approval)
		upd.ApprovalMode, changed = &mode, true
	}
	return upd, changed, nil
}

// existingSession is the session --session names or --continue finds; nil
// for a new one.
func existingSession(ctx context.Context, c *client.Client, o execOptions) (*client.SessionFields, error) {
	switch {
	case o.session != "":
		resp, err := client.SessionInfo(ctx, c, o.session)
		if err != nil {
			return nil, err
		}
		if resp.Session == nil {
			return nil, &client.Error{Message: fmt.Sprintf("session %s not found", o.session), Code: "NOT_FOUND"}
		}
		s := &resp.Session.SessionFields
		if o.project != "" && (s.Project == nil || s.Project.Path != o.project) {
			return nil, cmdutil.UsageError{Err: fmt.Errorf("session %s belongs to %s, not to --project %s (a session's project never changes)", o.session, projectOf(*s), o.project)}
		}
		return s, nil
	case o.continueLast:
		return newestSession(ctx, c, o.project)
	}
	return nil, nil
}

// execWorktree is the worktree --worktree asks for; nil without it.
func execWorktree(o execOptions) *client.WorktreeInput {
	if !o.worktree {
		return nil
	}
	wt := &client.WorktreeInput{}
	if o.worktreeBranch != "" {
		wt.Branch = &o.worktreeBranch
	}
	if o.baseRef != "" {
		wt.BaseRef = &o.baseRef
	}
	return wt
}

// createExecSession creates the session in the project directory (found
// or created; none for "") with the model and approval mode of upd, in a
// git worktree of its own when wt is set.
func createExecSession(ctx context.Context, c *client.Client, project string, upd client.UpdateSessionInput, wt *client.WorktreeInput) (client.SessionFields, error) {
	in := client.CreateSessionInput{ConnectionId: upd.ConnectionId, Model: upd.Model, ApprovalMode: upd.ApprovalMode, Worktree: wt}
	if project != "" {
		p, err := findOrCreateProject(ctx, c, project)
		if err != nil {
			return client.SessionFields{}, err
		}
		in.ProjectId = &p.Id
	}
	resp, err := client.CreateSession(ctx, c, in)
	if err != nil {
		return client.SessionFields{}, err
	}
	return resp.CreateSession.SessionFields, nil
}

// newestSession is the most recently active top-level session of the
// project directory (absolute; "" for sessions without a project).
func newestSession(ctx context.Context, c *client.Client, project string) (*client.SessionFields, error) {
	sessions, _, err := allSessions(ctx, c, false)
	if err != nil {
		return nil, err
	}
	var best *client.SessionFields
	for i := range sessions {
		s := &sessions[i]
		path := ""
		if s.Project != nil {
			path = filepath.Clean(s.Project.Path)
		}
		if path == project && (best == nil || s.UpdatedAt.After(best.UpdatedAt)) {
			best = s
		}
	}
	if best == nil {
		where := "without a project"
		if project != "" {
			where = "in " + project
		}
		return nil, &client.Error{Message: fmt.Sprintf("no session to continue %s (run foya exec without --continue to start one)", where), Code: "NOT_FOUND"}
	}
	return best, nil
}
