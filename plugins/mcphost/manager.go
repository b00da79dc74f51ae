// Package mcphost connects the kernel to Model Context Protocol servers
// with the official Go SDK: STDIO servers run as child processes, HTTP
// servers are reached over Streamable HTTP. A Manager is the core.MCPRuntime
// of the MCP catalog and a core.ToolRunner for the tool hub: every tool of
// every ready server is offered as mcp__<server>__<tool>.
package mcphost

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/telemetry"
)

// Config wires a Manager. Zero durations and counts take the defaults.
type Config struct {
	Logger *slog.Logger
	// Version is reported to servers as the client version.
	Version string
	// OnChange is called (from a goroutine of the Manager, never under its
	// locks) whenever a server's status or tool list changes.
	OnChange func(serverID string)
	// ConnectTimeout bounds starting a server and listing its tools
	// (default 60s: npx may download the server first).
	ConnectTimeout time.Duration
	// Backoff is the first wait before a restart; it doubles per
	// consecutive failure up to MaxBackoff (defaults 500ms and 30s).
	Backoff    time.Duration
	MaxBackoff time.Duration
	// MaxFailures consecutive failures make a server FAILED (default 5).
	MaxFailures int
	// StableAfter is how long a server must stay ready for its failure
	// count to start again from zero (default 60s).
	StableAfter time.Duration
	// Sandbox confines STDIO servers; nil runs them unconfined (with the
	// same minimal environment and state directory).
	Sandbox *SandboxConfig
	// StateDir holds each STDIO server's state directory (its HOME and
	// XDG_* directories); "" means DefaultStateRoot().
	StateDir string
	// ElicitationTimeout bounds how long a server's question
	// (elicitation/create) waits for an answer before it is declined
	// (default DefaultElicitationTimeout). The call's own timeout is
	// paused meanwhile.
	ElicitationTimeout time.Duration
	// ScopeDir returns a session's directory (its project's, or its
	// scratch directory), which a server attached to that session may
	// write and starts in.
	ScopeDir func(ctx context.Context, sessionID string) (string, error)
	// Auth keeps the OAuth grants of HTTP servers (sealed); nil turns
	// OAuth off (a 401 is then an ordinary connection failure).
	Auth core.MCPAuthStore
	// CallbackURL returns the kernel's OAuth redirect URL (its HTTP edge's
	// CallbackPath); "" until the kernel listens.
	CallbackURL func() string
	// OAuthHTTPClient makes the requests to authorization servers
	// (default: a client with a 30s timeout).
	OAuthHTTPClient *http.Client
	// ClientMetadataURL is the kernel's OAuth client ID metadata document
	// (an https URL with a path, where ClientMetadata is hosted): the
	// client_id used with authorization servers that take such documents
	// (client_id_metadata_document_supported) when the server has no
	// configured client. "" uses dynamic registration only.
	ClientMetadataURL string
	// OnNeedsAuth is called when a server enters NEEDS_AUTH (the kernel
	// event mcp_needs_auth).
	OnNeedsAuth func(serverID string)
	// AuthPoll is how often a server in NEEDS_AUTH looks for a grant
	// stored by another kernel on the same database (default 2s).
	AuthPoll time.Duration
}

// Manager runs the configured MCP servers. It is safe for concurrent use.
type Manager struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	servers map[string]*server // by server id
	warned  map[string]bool
	closed  bool
	// off holds the servers turned off per session (SetSessionDisabled).
	off map[string][]string

	conf confinement
	// pending holds the sign-ins waiting for their callback, by state.
	pending map[string]*pendingLogin
	// cimdChecked is when the client metadata document was last found to
	// list a callback URL, by that URL.
	cimdChecked map[string]time.Time
}

var (
	_ core.MCPRuntime     = (*Manager)(nil)
	_ core.ToolRunner     = (*Manager)(nil)
	_ core.MCPAuthRuntime = (*Manager)(nil)
)

// New returns a Manager that runs nothing until Apply.
func New(cfg Config) *Manager {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 60 * time.Second
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 500 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = 5
	}
	if cfg.StableAfter <= 0 {
		cfg.StableAfter = 60 * time.Second
	}
	if cfg.ElicitationTimeout <= 0 {
		cfg.ElicitationTimeout = DefaultElicitationTimeout
	}
	if cfg.AuthPoll <= 0 {
		cfg.AuthPoll = 2 * time.Second
	}
	cfg.Version = cmp.Or(cfg.Version, "dev")
	return &Manager{cfg: cfg, log: cfg.Logger, servers: map[string]*server{}, warned: map[string]bool{}, pending: map[string]*pendingLogin{}, cimdChecked: map[string]time.Time{}}
}

// Apply starts, stops and restarts servers to match the configuration.
// It never waits for a server to come up.
func (m *Manager) Apply(ctx context.Context, configs []core.MCPServerConfig) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	want := map[string]core.MCPServerConfig{}
	for _, c := range configs {
		if c.Enabled {
			want[c.ID] = c
		}
	}
	var stop []*server
	for id, s := range m.servers {
		if c, ok := want[id]; !ok || !reflect.DeepEqual(c, s.cfg) {
			stop = append(stop, s)
			delete(m.servers, id)
		}
	}
	var start []*server
	for id, c := range want {
		if _, ok := m.servers[id]; !ok {
			s := newServer(m, c)
			m.servers[id] = s
			start = append(start, s)
		}
	}
	m.mu.Unlock()
	for _, s := range stop {
		s.stop()
	}
	for _, s := range start {
		s.start()
	}
}

// Restart stops and starts a server again; NOT_FOUND when it is not
// running (unknown or disabled).
func (m *Manager) Restart(ctx context.Context, id string) error {
	m.mu.Lock()
	s := m.servers[id]
	m.mu.Unlock()
	if s == nil {
		return core.Errorf(core.CodeNotFound, "MCP server %s is not running", id)
	}
	s.requestRestart()
	return nil
}

// State returns a server's state.
func (m *Manager) State(id string) core.MCPServerState {
	m.mu.Lock()
	s := m.servers[id]
	m.mu.Unlock()
	if s == nil {
		return core.MCPServerState{Status: core.MCPStarting}
	}
	return s.snapshot()
}

// SetSessionDisabled sets the servers not offered in a session and its
// sub-agent sessions.
func (m *Manager) SetSessionDisabled(sessionID string, serverIDs []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.off == nil {
		m.off = map[string][]string{}
	}
	if len(serverIDs) == 0 {
		delete(m.off, sessionID)
		return
	}
	m.off[sessionID] = slices.Clone(serverIDs)
}

// Close stops every server.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	servers := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		servers = append(servers, s)
	}
	m.servers = map[string]*server{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(s.stop)
	}
	wg.Wait()
}

func (m *Manager) changed(id string) {
	if m.cfg.OnChange != nil {
		m.cfg.OnChange(id)
	}
}

// Tools lists the tools of every ready kernel-wide server and of the
// servers attached to the sessions of the context's tool scope
// (core.ToolScope); while a server that was ready restarts, its last known
// tools stay listed (calls wait for it).
func (m *Manager) Tools(ctx context.Context) ([]core.ToolInfo, error) {
	names, clashes := m.visible(core.ToolScope(ctx))
	var out []core.ToolInfo
	for _, n := range names {
		schema, err := json.Marshal(n.def.InputSchema)
		if err != nil || string(schema) == "null" {
			schema = []byte(`{"type":"object"}`)
		}
		desc := n.def.Description
		if desc == "" && n.def.Annotations != nil {
			desc = n.def.Annotations.Title
		}
		out = append(out, core.ToolInfo{
			Name: n.exposed, Description: desc, Schema: schema,
			ReadOnly: n.def.Annotations != nil && n.def.Annotations.ReadOnlyHint,
			Action:   "command", Parallel: true,
		})
	}
	m.mu.Lock()
	var logs []string
	for _, c := range clashes {
		if !m.warned[c] {
			m.warned[c] = true
			logs = append(logs, c)
		}
	}
	m.mu.Unlock()
	for _, c := range logs {
		m.log.Warn("MCP tool names collide after sanitizing; later ones get a numeric suffix", "tools", c)
	}
	return out, nil
}

// visible names the tools offered in a scope: kernel-wide servers first,
// then those of the scope's sessions (the session's own, then its
// ancestors'), each group by server name.
func (m *Manager) visible(scope []string) ([]exposedTool, []string) {
	rank := map[string]int{"": 0}
	for i, id := range scope {
		if _, ok := rank[id]; !ok {
			rank[id] = i + 1
		}
	}
	m.mu.Lock()
	off := map[string]bool{}
	for _, id := range scope {
		for _, sid := range m.off[id] {
			off[sid] = true
		}
	}
	servers := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		if _, ok := rank[s.cfg.SessionID]; ok && !off[s.cfg.ID] {
			servers = append(servers, s)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(servers, func(a, b *server) int {
		if c := rank[a.cfg.SessionID] - rank[b.cfg.SessionID]; c != 0 {
			return c
		}
		if c := strings.Compare(a.cfg.Name, b.cfg.Name); c != 0 {
			return c
		}
		return strings.Compare(a.cfg.ID, b.cfg.ID)
	})
	var lists []serverTools
	for _, s := range servers {
		if tools := s.offered(); len(tools) > 0 {
			lists = append(lists, serverTools{id: s.cfg.ID, name: s.cfg.Name, tools: tools})
		}
	}
	return exposeNames(lists)
}

// Call runs one tool on its server, waiting for a starting server to be
// ready, within the server's timeout. Failures the model should see are
// tool errors; a cancelled ctx is returned as an error.
//
// Each call is an mcp.call span and counts in foya.mcp.calls
// (docs/telemetry.md).
func (m *Manager) Call(ctx context.Context, req core.ToolCallRequest) (core.ToolResult, error) {
	if !telemetry.On() {
		res, _, err := m.call(ctx, req)
		return res, err
	}
	ctx, sp := telemetry.Start(ctx, telemetry.SpanMCP, telemetry.String("gen_ai.tool.name", req.Name), telemetry.String("rpc.system", "jsonrpc"), telemetry.String("rpc.method", "tools/call"))
	res, server, err := m.call(ctx, req)
	outcome := "ok"
	if err != nil || res.IsError {
		outcome = "error"
		sp.Fail("the MCP call failed")
	}
	sp.Set(telemetry.String("foya.mcp.server", server), telemetry.String("foya.tool.outcome", outcome))
	sp.End()
	telemetry.Add(telemetry.MCPCalls, 1, telemetry.String("foya.mcp.server", server), telemetry.String("foya.tool.outcome", outcome))
	return res, err
}

// call is Call; server is the name of the server that got the call.
func (m *Manager) call(ctx context.Context, req core.ToolCallRequest) (res core.ToolResult, server string, err error) {
	res, err = m.callOn(ctx, req, &server)
	return res, server, err
}

func (m *Manager) callOn(ctx context.Context, req core.ToolCallRequest, server *string) (core.ToolResult, error) {
	scope := core.ToolScope(ctx)
	if scope == nil && req.SessionID != "" {
		scope = []string{req.SessionID}
	}
	names, _ := m.visible(scope)
	i := slices.IndexFunc(names, func(n exposedTool) bool { return n.exposed == req.Name })
	if i < 0 {
		return core.ToolResult{}, core.Errorf(core.CodeNotFound, "no MCP server offers tool %q in this session", req.Name)
	}
	t := names[i].toolTarget
	m.mu.Lock()
	s := m.servers[t.serverID]
	m.mu.Unlock()
	if s == nil {
		return toolError("the MCP server of %s was removed or disabled", req.Name), nil
	}
	*server = s.cfg.Name
	timeout := time.Duration(s.cfg.CallTimeoutSeconds()) * time.Second
	if req.Timeout > 0 {
		timeout = min(timeout, req.Timeout)
	}
	cctx, timer := startCallTimer(ctx, timeout)
	defer timer.stop()
	cs, err := s.ready(cctx)
	if err != nil {
		if ctx.Err() != nil {
			return core.ToolResult{}, ctx.Err()
		}
		if errors.Is(context.Cause(cctx), errCallTimeout) {
			return toolError("MCP server %q was not ready within %s", s.cfg.Name, timeout), nil
		}
		return toolError("MCP server %q is not available: %s", s.cfg.Name, s.scrub(err.Error())), nil
	}
	args := req.Input
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	call := &inflight{ctx: ctx, asker: core.AskerOf(ctx), sampler: core.SamplerOf(ctx), sessionID: req.SessionID, timer: timer}
	untrack := s.track(call)
	res, answer, err := s.callTool(cctx, cs, call, &mcp.CallToolParams{Name: t.tool, Arguments: args})
	untrack()
	if answer != nil {
		return *answer, nil
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return core.ToolResult{}, ctx.Err()
		case errors.Is(context.Cause(cctx), errCallTimeout):
			return toolError("%s timed out after %s (timeoutSeconds of MCP server %q); the call was cancelled", req.Name, timeout, s.cfg.Name), nil
		}
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) && !s.sessionGone(cs) {
			return toolError("MCP server %q refused the call: %s", s.cfg.Name, s.scrub(rpcErr.Message)), nil
		}
		// Not an answer of the server: the connection broke (the process
		// exited or crashed, the HTTP server went away).
		s.dropSession(cs)
		return toolError("MCP server %q stopped during the call (%s); it is being restarted", s.cfg.Name, s.scrub(err.Error())), nil
	}
	return convertResult(res), nil
}

var errCallTimeout = errors.New("mcp call timed out")

func toolError(format string, args ...any) core.ToolResult {
	return core.ToolResult{Text: fmt.Sprintf(format, args...), IsError: true}
}
