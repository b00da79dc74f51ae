package acp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/foya-dev/foya/client"
)

// attachedMCP is the client's MCP servers this connection attached to one
// session (session/new and session/load), detached again when the session
// closes or the connection ends.
type attachedMCP struct {
	a         *Agent
	sessionID string

	mu  sync.Mutex
	ids []string // ids of the MCP servers this connection attached
}

// set records the servers attached to a loaded session.
func (m *attachedMCP) set(ids []string) {
	m.mu.Lock()
	m.ids = ids
	m.mu.Unlock()
}

// attach makes the client's servers the ones this connection attached
// to the session: each is attached (the kernel replaces a server of the
// same name), and those attached before but no longer listed are detached.
func (m *attachedMCP) attach(ctx context.Context, servers []client.McpServerInput) error {
	var ids []string
	for i, in := range servers {
		r, err := client.ACPAttachSessionMcpServer(ctx, m.a.k, m.sessionID, in)
		if err != nil {
			err = mcpError(err)
			var re *rpcError
			if errors.As(err, &re) {
				re.Message = fmt.Sprintf("mcpServers[%d] (%v): %s", i, in.Name, re.Message)
			}
			return err
		}
		ids = append(ids, r.AttachSessionMcpServer.Id)
	}
	m.mu.Lock()
	old := m.ids
	m.ids = ids
	m.mu.Unlock()
	for _, id := range old {
		if !slices.Contains(ids, id) {
			m.detachOne(ctx, id)
		}
	}
	return nil
}

func (m *attachedMCP) detachOne(ctx context.Context, id string) {
	_, err := client.DetachSessionMcpServer(ctx, m.a.k, m.sessionID, id)
	var ce codedError
	if err != nil && !(errors.As(err, &ce) && ce.GraphQLCode() == "NOT_FOUND") {
		m.a.log.Warn("acp: detach an MCP server", "session_id", m.sessionID, "mcp_server_id", id, "err", err)
	}
}

// detachAll detaches the servers this connection attached (session/close,
// end of the connection).
func (m *attachedMCP) detachAll(ctx context.Context) {
	m.mu.Lock()
	ids := m.ids
	m.ids = nil
	m.mu.Unlock()
	for _, id := range ids {
		m.detachOne(ctx, id)
	}
}

// mcpWait bounds how long session/new and session/load wait for the
// client's MCP servers to come up before answering.
const mcpWait = 30 * time.Second

// wait waits until none of this connection's servers is STARTING (or
// mcpWait passes), so that the first prompt sees their tools; a server
// that failed is logged and the session goes on without it.
func (m *attachedMCP) wait(ctx context.Context) {
	m.mu.Lock()
	n := len(m.ids)
	m.mu.Unlock()
	if n == 0 {
		return
	}
	deadline := time.Now().Add(mcpWait)
	for {
		r, err := client.ACPSessionMcpServers(ctx, m.a.k, m.sessionID)
		if err != nil || r.Session == nil {
			m.a.log.Warn("acp: read the session's MCP servers", "session_id", m.sessionID, "err", err)
			return
		}
		starting := false
		for _, srv := range r.Session.McpServers {
			starting = starting || srv.Status == client.McpStatusStarting
		}
		if !starting || time.Now().After(deadline) || ctx.Err() != nil {
			for _, srv := range r.Session.McpServers {
				if srv.Status != client.McpStatusReady {
					m.a.log.Warn("acp: MCP server not ready; the session goes on without its tools until it is", "session_id", m.sessionID, "mcp_server", srv.Name, "status", srv.Status, "err", deref(srv.Error))
				}
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}
