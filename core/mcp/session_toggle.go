package mcp

import (
	"context"
	"slices"
	"sync"

	"github.com/foya-dev/foya/core"
)

// sessionToggles holds, per session, the MCP servers turned off for it
// (SetSessionEnabled). Like session servers they live in memory only: a
// restarted kernel offers every server again.
type sessionToggles struct {
	mu  sync.Mutex
	off map[string][]string // session id → server ids, in the order turned off
}

// SetSessionEnabled turns a server on or off for one session (and the
// sub-agent sessions it spawns): off, its tools are not offered there and
// calls to them are unknown tools; other sessions are unaffected. The
// server may be kernel-wide or attached to that session; NOT_FOUND for an
// unknown session or server.
func (s *Service) SetSessionEnabled(ctx context.Context, sessionID, serverID string, enabled bool) (core.MCPServer, error) {
	if s.exists != nil {
		if err := s.exists(ctx, sessionID); err != nil {
			return core.MCPServer{}, err
		}
	}
	s.mu.Lock()
	c, ok := s.find(serverID)
	s.mu.Unlock()
	if !ok {
		return core.MCPServer{}, core.Errorf(core.CodeNotFound, "MCP server %s not found (list them with mcpServers or Session.mcpServers)", serverID)
	}
	if c.SessionID != "" && c.SessionID != sessionID {
		return core.MCPServer{}, core.Errorf(core.CodeBadInput, "serverId: MCP server %s is attached to another session (%s); it is not offered in session %s", serverID, c.SessionID, sessionID)
	}
	s.toggles.mu.Lock()
	if s.toggles.off == nil {
		s.toggles.off = map[string][]string{}
	}
	ids := slices.DeleteFunc(slices.Clone(s.toggles.off[sessionID]), func(id string) bool { return id == serverID })
	if !enabled {
		ids = append(ids, serverID)
	}
	if len(ids) == 0 {
		delete(s.toggles.off, sessionID)
	} else {
		s.toggles.off[sessionID] = ids
	}
	s.runtime.SetSessionDisabled(sessionID, ids)
	s.toggles.mu.Unlock()
	s.log.Info("MCP server toggled for a session", "session_id", sessionID, "mcp_server_id", serverID, "enabled", enabled)
	return redactMCP(c, s.runtime.State(c.ID)), nil
}

// SessionDisabled lists the servers turned off for a session.
func (s *Service) SessionDisabled(sessionID string) []string {
	s.toggles.mu.Lock()
	defer s.toggles.mu.Unlock()
	return slices.Clone(s.toggles.off[sessionID])
}

// forgetToggles drops a deleted session's toggles.
func (s *Service) forgetToggles(sessionID string) {
	s.toggles.mu.Lock()
	defer s.toggles.mu.Unlock()
	if _, ok := s.toggles.off[sessionID]; ok {
		delete(s.toggles.off, sessionID)
		s.runtime.SetSessionDisabled(sessionID, nil)
	}
}
