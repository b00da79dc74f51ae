package mcp

import (
	"context"

	"github.com/foya-dev/foya/core"
)

// Login returns the URL a person opens to sign in to an HTTP server that
// answered 401 (status NEEDS_AUTH). NOT_FOUND for an unknown server,
// CONFLICT when the server is not an HTTP server or does not need a
// sign-in, UNAVAILABLE without OAuth support.
func (s *Service) Login(ctx context.Context, id string) (string, error) {
	srv, err := s.Server(ctx, id)
	if err != nil {
		return "", err
	}
	if srv.Transport != core.MCPHTTP {
		return "", core.Errorf(core.CodeConflict, "MCP server %q is a STDIO server; only HTTP servers sign in with OAuth", srv.Name)
	}
	if !srv.Enabled {
		return "", core.Errorf(core.CodeConflict, "MCP server %q is disabled; enable it with updateMcpServer(input: {enabled: true}) first", srv.Name)
	}
	if s.auth == nil {
		return "", core.Errorf(core.CodeUnavailable, "this kernel has no OAuth support for MCP servers")
	}
	return s.auth.Login(ctx, id)
}

// Logout revokes a server's OAuth tokens where its authorization server
// offers revocation (RFC 7009), forgets them and reconnects the server,
// which then needs a sign-in again.
func (s *Service) Logout(ctx context.Context, id string) (core.MCPServer, error) {
	srv, err := s.Server(ctx, id)
	if err != nil {
		return core.MCPServer{}, err
	}
	if s.auth == nil {
		return core.MCPServer{}, core.Errorf(core.CodeUnavailable, "this kernel has no OAuth support for MCP servers")
	}
	if err := s.auth.Logout(ctx, srv.ID); err != nil {
		return core.MCPServer{}, err
	}
	s.Changed(id)
	return s.Server(ctx, id)
}

// CompleteLogin finishes a sign-in from the authorization server's
// redirect to the kernel's callback; it returns the server's name.
func (s *Service) CompleteLogin(ctx context.Context, state, code, iss string) (string, error) {
	if s.auth == nil {
		return "", core.Errorf(core.CodeUnavailable, "this kernel has no OAuth support for MCP servers")
	}
	return s.auth.CompleteLogin(ctx, state, code, iss)
}
