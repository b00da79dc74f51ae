package graph

import (
	"context"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/mcp"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/graph/model"
)

// maxScopeDepth bounds the walk up a session's ancestors.
const maxScopeDepth = 64

// sessionScope is the session and its ancestors: the sessions whose MCP
// servers it sees.
func sessionScope(ctx context.Context, svc *session.Service, id string) []string {
	scope := []string{id}
	for range maxScopeDepth {
		s, err := svc.Session(ctx, id)
		if err != nil || s.ParentID == "" {
			break
		}
		id = s.ParentID
		scope = append(scope, id)
	}
	return scope
}

// sendInput is sendMessage's input with the MCP parts applied: a text that
// starts with /mcp__<server>__<prompt> becomes the prompt's expansion, and
// the attached resources are read and appended, so the stored message is
// what the model gets.
func sendInput(ctx context.Context, svc *session.Service, m *mcp.Service, sessionID string, in model.UserInput) (core.UserInput, error) {
	u := userInput(in)
	if m == nil || (u.Command != "" && len(in.Resources) == 0) {
		if len(in.Resources) > 0 {
			return u, core.Errorf(core.CodeUnavailable, "this kernel has no MCP support configured")
		}
		return u, nil
	}
	var scope []string
	if len(in.Resources) > 0 || len(u.Text) > 6 && u.Text[:6] == "/mcp__" {
		if _, err := svc.Session(ctx, sessionID); err != nil {
			return u, err
		}
		scope = sessionScope(ctx, svc, sessionID)
	}
	if u.Command == "" && scope != nil {
		text, err := m.ExpandPrompt(ctx, scope, u.Text)
		if err != nil {
			return u, err
		}
		u.Text = text
	}
	extra, err := m.ResourceContext(ctx, scope, in.Resources)
	if err != nil {
		return u, err
	}
	u.Text += extra
	return u, nil
}
