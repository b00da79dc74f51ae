package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"sync"

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
	mcp        *attachedMCP
	textSent   bool // deltas streamed for the current assistant message
	thoughtSet bool
	refused    bool // the turn's last reply so far is a refusal (stopReason "refusal")
	// terms are the session's background terminals shown as tool calls.
	terms terminalViews
	// commandsSent is the last available_commands_update sent (JSON);
	// mcpSeen each MCP server's status as last seen (nil before the first look).
	commandsSent string
	mcpSeen      map[string]string
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
	answered    chan struct{} // closed once the prompt's answer is written
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
		turns: map[string]*turnInfo{}, tools: map[string]toolInfo{}, asking: map[string]context.CancelFunc{},
		mcp: &attachedMCP{a: a, sessionID: gs.ID}}
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
	for _, cid := range s.terms.unmirror() {
		s.releaseClientTerminal(cid) // its follower would wait for the end of a terminal nobody shows
	}
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
	{ID: "guarded", Name: "Guarded", Description: "Like ask, but a guardian model reviews each write and command first; only what it escalates asks for permission."},
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
	case "ask", "explore", "bypass", "guarded":
		am, ag := client.ApprovalMode(strings.ToUpper(id)), client.AgentModeExecute
		in.ApprovalMode, in.AgentMode = &am, &ag
	case "plan":
		ag := client.AgentModePlan
		in.AgentMode = &ag
	default:
		return invalidParams("unknown mode %q: use ask, explore, bypass, guarded or plan", id)
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
