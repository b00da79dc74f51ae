package graph

import (
	"context"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/mcp"
	"github.com/foya-dev/foya/graph/model"
)

// The MCP server catalog's resolvers. A kernel may run without one: its
// lists are then empty and its mutations answer UNAVAILABLE.

// errNoMCP is the error of an MCP mutation on a kernel without MCP support.
func errNoMCP() error {
	return core.Errorf(core.CodeUnavailable, "this kernel has no MCP support configured")
}

func mcpServerInput(in model.McpServerInput) core.MCPServerInput {
	out := core.MCPServerInput{
		Name: in.Name, Transport: in.Transport, Command: in.Command, Args: in.Args, Env: in.Env,
		URL: in.URL, Headers: in.Headers, Enabled: in.Enabled,
		OAuthClientID: in.OauthClientID, OAuthClientSecret: in.OauthClientSecret,
	}
	if in.TimeoutSeconds != nil {
		t := int(min(max(*in.TimeoutSeconds, -1), core.MaxMCPTimeout+1))
		out.TimeoutSeconds = &t
	}
	return out
}

func createMCPServer(ctx context.Context, svc *mcp.Service, in model.McpServerInput) (*core.MCPServer, error) {
	if svc == nil {
		return nil, errNoMCP()
	}
	return ptr(svc.Create(ctx, mcpServerInput(in)))
}

func updateMCPServer(ctx context.Context, svc *mcp.Service, id string, in model.McpServerInput) (*core.MCPServer, error) {
	if svc == nil {
		return nil, errNoMCP()
	}
	return ptr(svc.Update(ctx, id, mcpServerInput(in)))
}

func deleteMCPServer(ctx context.Context, svc *mcp.Service, id string) (bool, error) {
	if svc == nil {
		return false, errNoMCP()
	}
	return done(svc.Delete(ctx, id))
}

func restartMCPServer(ctx context.Context, svc *mcp.Service, id string) (*core.MCPServer, error) {
	if svc == nil {
		return nil, errNoMCP()
	}
	return ptr(svc.Restart(ctx, id))
}

func attachSessionMCPServer(ctx context.Context, svc *mcp.Service, sessionID string, in model.McpServerInput) (*core.MCPServer, error) {
	if svc == nil {
		return nil, errNoMCP()
	}
	return ptr(svc.AttachSession(ctx, sessionID, mcpServerInput(in)))
}

func detachSessionMCPServer(ctx context.Context, svc *mcp.Service, sessionID, id string) (bool, error) {
	if svc == nil {
		return false, errNoMCP()
	}
	return done(svc.DetachSession(ctx, sessionID, id))
}

// mcpServers serves Query.mcpServers: the kernel-wide servers.
func mcpServers(ctx context.Context, svc *mcp.Service) []core.MCPServer {
	if svc == nil {
		return []core.MCPServer{}
	}
	return svc.List(ctx)
}

// sessionMCPServers serves Session.mcpServers: the servers attached to
// the session.
func sessionMCPServers(ctx context.Context, svc *mcp.Service, sessionID string) []core.MCPServer {
	if svc == nil {
		return []core.MCPServer{}
	}
	return svc.SessionServers(ctx, sessionID)
}

func setSessionMCPServerEnabled(ctx context.Context, svc *mcp.Service, sessionID, serverID string, enabled bool) (*core.MCPServer, error) {
	if svc == nil {
		return nil, errNoMCP()
	}
	return ptr(svc.SetSessionEnabled(ctx, sessionID, serverID, enabled))
}

func sessionDisabledMCPServers(svc *mcp.Service, sessionID string) []string {
	if svc == nil {
		return []string{}
	}
	return append([]string{}, svc.SessionDisabled(sessionID)...)
}

func loginMCPServer(ctx context.Context, svc *mcp.Service, id string) (string, error) {
	if svc == nil {
		return "", errNoMCP()
	}
	return svc.Login(ctx, id)
}

func logoutMCPServer(ctx context.Context, svc *mcp.Service, id string) (*core.MCPServer, error) {
	if svc == nil {
		return nil, errNoMCP()
	}
	return ptr(svc.Logout(ctx, id))
}
