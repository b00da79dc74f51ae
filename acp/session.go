package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/foya-dev/foya/client"
)

// session is a Foya session opened on this connection: it follows the
// session's events and turns them into session/update notifications, and
// answers prompts when their turns end.
type session struct {
	a      *Agent
	id     string
	cwd    string
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu        sync.Mutex
	mode      string
	lastSeq   int
	turnsSeen int                  // turn_started events observed
	turns     map[string]*turnInfo // by turn id
	prompts   []*pendingPrompt
	tools     map[string]toolInfo // tool calls seen, by id
	question  string              // request id of a question awaiting the user's next prompt
	// asking holds the permission dialogs open on the client, by approval
	// request id: cancelling one withdraws it ($/cancel_request).
	asking     map[string]context.CancelFunc
	mcp        []string // ids of the MCP servers this connection attached
	textSent   bool     // deltas streamed for the current assistant message
	thoughtSet bool
	refused    bool // the turn's last reply so far is a refusal (stopReason "refusal")
}

type turnInfo struct {
	index       int
	queueItemID string
	claimed     bool
	finished    bool
	status      string
	reason      string
}

type pendingPrompt struct {
	started     bool   // sendMessage started the turn
	queueItemID string // else: the queued item
	after       int    // turnsSeen before sendMessage
	turnID      string
	result      chan turnResult
}

type turnResult struct {
	status, reason string
	err            error
}

type toolInfo struct {
	name  string
	input json.RawMessage
}

func newSession(a *Agent, gs gqlSession, cwd string) *session {
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{a: a, id: gs.ID, cwd: cwd, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		turns: map[string]*turnInfo{}, tools: map[string]toolInfo{}, asking: map[string]context.CancelFunc{}}
	s.mode = modeOf(gs.ApprovalMode, gs.AgentMode)
	return s
}

func (s *session) updateMeta(gs gqlSession) {
	s.mu.Lock()
	s.mode = modeOf(gs.ApprovalMode, gs.AgentMode)
	s.mu.Unlock()
}

func (s *session) stop() {
	s.cancel()
	<-s.done
	s.mu.Lock()
	for _, p := range s.prompts {
		p.result <- turnResult{status: "cancelled"} // session/close cancels its prompts
	}
	s.prompts = nil
	s.mu.Unlock()
}

// update sends a session/update notification; u is one of the update
// types of wire.go.
func (s *session) update(u any) {
	s.a.conn.notify("session/update", sessionNotification{SessionID: s.id, Update: u})
}

// chunk sends a content chunk update (kind: user_message_chunk,
// agent_message_chunk or agent_thought_chunk).
func (s *session) chunk(kind string, c contentBlock) {
	s.update(contentChunk{SessionUpdate: kind, Content: c})
}

// The client's MCP servers.

func (s *session) setMCP(ids []string) {
	s.mu.Lock()
	s.mcp = ids
	s.mu.Unlock()
}

// attachMCP makes the client's servers the ones this connection attached
// to the session: each is attached (the kernel replaces a server of the
// same name), and those attached before but no longer listed are detached.
func (s *session) attachMCP(ctx context.Context, servers []client.McpServerInput) error {
	var ids []string
	for i, in := range servers {
		r, err := client.ACPAttachSessionMcpServer(ctx, s.a.k, s.id, in)
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
	s.mu.Lock()
	old := s.mcp
	s.mcp = ids
	s.mu.Unlock()
	for _, id := range old {
		if !slices.Contains(ids, id) {
			s.detachOne(ctx, id)
		}
	}
	return nil
}

func (s *session) detachOne(ctx context.Context, id string) {
	_, err := client.DetachSessionMcpServer(ctx, s.a.k, s.id, id)
	var ce codedError
	if err != nil && !(errors.As(err, &ce) && ce.GraphQLCode() == "NOT_FOUND") {
		s.a.log.Warn("acp: detach an MCP server", "session_id", s.id, "mcp_server_id", id, "err", err)
	}
}

// detachMCP detaches the servers this connection attached (session/close,
// end of the connection).
func (s *session) detachMCP(ctx context.Context) {
	s.mu.Lock()
	ids := s.mcp
	s.mcp = nil
	s.mu.Unlock()
	for _, id := range ids {
		s.detachOne(ctx, id)
	}
}

// mcpWait bounds how long session/new and session/load wait for the
// client's MCP servers to come up before answering.
const mcpWait = 30 * time.Second

// waitMCP waits until none of this connection's servers is STARTING (or
// mcpWait passes), so that the first prompt sees their tools; a server
// that failed is logged and the session goes on without it.
func (s *session) waitMCP(ctx context.Context) {
	s.mu.Lock()
	n := len(s.mcp)
	s.mu.Unlock()
	if n == 0 {
		return
	}
	deadline := time.Now().Add(mcpWait)
	for {
		r, err := client.ACPSessionMcpServers(ctx, s.a.k, s.id)
		if err != nil || r.Session == nil {
			s.a.log.Warn("acp: read the session's MCP servers", "session_id", s.id, "err", err)
			return
		}
		starting := false
		for _, m := range r.Session.McpServers {
			starting = starting || m.Status == client.McpStatusStarting
		}
		if !starting || time.Now().After(deadline) || ctx.Err() != nil {
			for _, m := range r.Session.McpServers {
				if m.Status != client.McpStatusReady {
					s.a.log.Warn("acp: MCP server not ready; the session goes on without its tools until it is", "session_id", s.id, "mcp_server", m.Name, "status", m.Status, "err", deref(m.Error))
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

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Modes.

// Modes: the approval modes plus plan.
var modes = []sessionMode{
	{ID: "ask", Name: "Ask", Description: "Reads run; file writes and commands ask for permission."},
	{ID: "explore", Name: "Explore", Description: "Read-only: tools that change anything are denied."},
	{ID: "bypass", Name: "Bypass", Description: "Every tool runs without asking."},
	{ID: "plan", Name: "Plan", Description: "The agent plans without changing files, then asks to execute the plan."},
}

func modeOf(approvalMode, agentMode string) string {
	switch strings.ToLower(agentMode) {
	case "plan", "awaiting_confirmation":
		return "plan"
	}
	return cmp.Or(strings.ToLower(approvalMode), "ask")
}

func (s *session) modeState() modeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return modeState{CurrentModeID: s.mode, AvailableModes: modes}
}

func (s *session) setMode(ctx context.Context, id string) error {
	var in client.UpdateSessionInput
	switch id {
	case "ask", "explore", "bypass":
		am, ag := client.ApprovalMode(strings.ToUpper(id)), client.AgentModeExecute
		in.ApprovalMode, in.AgentMode = &am, &ag
	case "plan":
		ag := client.AgentModePlan
		in.AgentMode = &ag
	default:
		return invalidParams("unknown mode %q: use ask, explore, bypass or plan", id)
	}
	r, err := client.ACPUpdateSession(ctx, s.a.k, s.id, in)
	if err != nil {
		return kernelError(err)
	}
	s.mu.Lock()
	s.mode = modeOf(string(r.UpdateSession.ApprovalMode), string(r.UpdateSession.AgentMode))
	s.mu.Unlock()
	return nil
}
