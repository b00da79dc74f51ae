package mcphost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/telemetry"
	"github.com/foya-dev/foya/plugins/sandbox"
)

// server supervises one enabled MCP server: connect, list tools, wait for
// the session to end, restart with backoff, FAILED after MaxFailures
// consecutive failures until a restart is requested.
type server struct {
	m   *Manager
	cfg core.MCPServerConfig
	log *slog.Logger

	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	restart chan struct{} // a restart was requested
	listed  chan struct{} // the server said its tool list changed

	mu      sync.Mutex
	state   core.MCPServerState
	tools   []*mcp.Tool // last known tools (kept while restarting)
	session *mcp.ClientSession
	wasUp   bool          // ready at least once since the last FAILED
	changed chan struct{} // closed and replaced on every state change
	calls   []*inflight   // running tool calls, oldest first
	urls    completions   // URL elicitations calls wait for (elicit_url.go)

	secrets []string // env and header values, URL query values: never shown

	oauth    *oauthHandler // HTTP servers when OAuth is on; nil otherwise
	authed   chan struct{} // a sign-in completed on this kernel
	authLost chan struct{} // the server went to NEEDS_AUTH while connected
	authWait bool          // the last attempt ended in NEEDS_AUTH
}

// secretsOf lists the values an error message must never show.
func secretsOf(c core.MCPServerConfig) []string {
	var out []string
	for _, kv := range append(slices.Clone(c.Env), c.Headers...) {
		out = append(out, kv.Value)
		// "Bearer TOKEN": the token alone may appear too.
		if _, tok, ok := strings.Cut(kv.Value, " "); ok {
			out = append(out, tok)
		}
	}
	if u, err := url.Parse(c.URL); err == nil {
		for _, vs := range u.Query() {
			out = append(out, vs...)
		}
	}
	var keep []string
	for _, v := range out {
		if len(v) >= 4 {
			keep = append(keep, v)
		}
	}
	// Longest first, so that a value containing another is replaced whole.
	slices.SortFunc(keep, func(a, b string) int { return len(b) - len(a) })
	return keep
}

// scrub removes secret values from a message meant for logs or clients.
func (s *server) scrub(msg string) string {
	for _, v := range s.secrets {
		msg = strings.ReplaceAll(msg, v, "[redacted]")
	}
	return msg
}

// scrubErr is err with secret values removed from its message.
func (s *server) scrubErr(err error) error {
	if err == nil {
		return nil
	}
	if m := s.scrub(err.Error()); m != err.Error() {
		return errors.New(m)
	}
	return err
}

func newServer(m *Manager, c core.MCPServerConfig) *server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{
		m: m, cfg: c, log: m.log.With("mcp_server", c.Name),
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
		restart: make(chan struct{}, 1), listed: make(chan struct{}, 1),
		state:   core.MCPServerState{Status: core.MCPStarting},
		changed: make(chan struct{}),
		secrets: secretsOf(c),
		authed:  make(chan struct{}, 1), authLost: make(chan struct{}, 1),
	}
	if c.Transport == core.MCPHTTP && m.cfg.Auth != nil {
		s.oauth = &oauthHandler{s: s}
	}
	return s
}

func (s *server) start() { go s.run() }

func (s *server) stop() {
	s.cancel()
	<-s.done
}

func (s *server) requestRestart() {
	s.set(func(st *core.MCPServerState) { st.Status, st.Error = core.MCPStarting, "" })
	select {
	case s.restart <- struct{}{}:
	default:
	}
}

func (s *server) snapshot() core.MCPServerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state
	st.Tools = slices.Clone(st.Tools)
	return st
}

// set changes the state, wakes waiters and reports the change.
func (s *server) set(f func(*core.MCPServerState)) {
	s.mu.Lock()
	f(&s.state)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	s.m.changed(s.cfg.ID)
}

// offered are the tools to offer: those of a ready server, or the last
// known ones while a server that was ready restarts.
func (s *server) offered() []*mcp.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.Status == core.MCPReady || (s.state.Status == core.MCPStarting && s.wasUp) {
		return s.tools
	}
	return nil
}

// ready waits until the server is ready and returns its session.
func (s *server) ready(ctx context.Context) (*mcp.ClientSession, error) {
	for {
		s.mu.Lock()
		st, cs, ch := s.state, s.session, s.changed
		s.mu.Unlock()
		switch st.Status {
		case core.MCPReady:
			if cs != nil {
				return cs, nil
			}
		case core.MCPFailed:
			return nil, fmt.Errorf("it failed: %s (restart it with restartMcpServer or `foya mcp restart`)", st.Error)
		case core.MCPNeedsAuth:
			return nil, fmt.Errorf("it needs a sign-in (`foya mcp login %s` or loginMcpServer)", s.cfg.Name)
		}
		select {
		case <-ch:
		case <-s.ctx.Done():
			return nil, errors.New("it was stopped")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// dropSession forgets cs as the server's live session when a call found
// its connection broken, so that the next call waits for the supervisor's
// reconnect instead of using the dead connection before the supervisor
// has noticed.
func (s *server) dropSession(cs *mcp.ClientSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == cs {
		s.session = nil
	}
}

// sessionGone reports whether cs is no longer the server's live session.
func (s *server) sessionGone(cs *mcp.ClientSession) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session != cs
}

func (s *server) backoff(failures int) time.Duration {
	d := s.m.cfg.Backoff
	for i := 1; i < failures && d < s.m.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.m.cfg.MaxBackoff)
}

// run is the supervisor loop.
func (s *server) run() {
	defer close(s.done)
	failures, starts := 0, 0
	for {
		cs, cmd, err := s.connect()
		if err == nil {
			if starts++; starts > 1 {
				telemetry.Add(telemetry.Restarts, 1, telemetry.String("foya.component", "mcp"), telemetry.String("foya.component.name", s.cfg.Name))
			}
		}
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			if s.takeAuthWait() {
				if !s.waitAuth() {
					return
				}
				failures = 0
				s.set(func(st *core.MCPServerState) { *st = core.MCPServerState{Status: core.MCPStarting} })
				continue
			}
			failures++
			s.log.Warn("mcp server did not start", "attempt", failures, "err", err)
			if failures = s.failed(failures, err); failures < 0 {
				return
			}
			continue
		}
		up := time.Now()
		end := s.serve(cs)
		s.mu.Lock()
		s.session = nil
		s.mu.Unlock()
		_ = cs.Close()
		if cmd != nil {
			killGroup(cmd)
		}
		switch end {
		case endStopped:
			return
		case endRestart:
			failures = 0
			s.log.Info("mcp server restarting on request")
			continue
		case endAuthLost:
			s.takeAuthWait()
			if !s.waitAuth() {
				return
			}
			failures = 0
			s.set(func(st *core.MCPServerState) { *st = core.MCPServerState{Status: core.MCPStarting} })
			continue
		}
		if time.Since(up) >= s.m.cfg.StableAfter {
			failures = 0
		}
		failures++
		err = errors.New("the server closed the connection (exited or crashed)")
		if cmd != nil && cmd.ProcessState != nil {
			err = fmt.Errorf("the server exited (%s)", cmd.ProcessState)
		}
		s.log.Warn("mcp server stopped", "attempt", failures, "err", err)
		if failures = s.failed(failures, err); failures < 0 {
			return
		}
	}
}

// failed records a failure and waits: the backoff, or, after MaxFailures,
// as FAILED until a restart request. It returns the failure count to go on
// with (0 after a restart request), or -1 when the server is stopped.
func (s *server) failed(failures int, cause error) int {
	if failures >= s.m.cfg.MaxFailures {
		s.mu.Lock()
		s.wasUp = false
		s.mu.Unlock()
		reason := fmt.Sprintf("%d failures in a row; last: %s", failures, cause)
		s.set(func(st *core.MCPServerState) { *st = core.MCPServerState{Status: core.MCPFailed, Error: reason} })
		s.log.Error("mcp server failed", "err", reason)
		select {
		case <-s.ctx.Done():
			return -1
		case <-s.restart:
			return 0
		}
	}
	s.set(func(st *core.MCPServerState) { st.Status, st.Error = core.MCPStarting, cause.Error() })
	t := time.NewTimer(s.backoff(failures))
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return -1
	case <-s.restart:
		return 0
	case <-t.C:
	}
	return failures
}

type endReason int

const (
	endDied endReason = iota
	endStopped
	endRestart
	endAuthLost
)

// connect starts the transport, runs the handshake and lists the tools.
func (s *server) connect() (*mcp.ClientSession, *exec.Cmd, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.m.cfg.ConnectTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "foya", Version: s.m.cfg.Version}, &mcp.ClientOptions{
		Logger: s.log,
		Capabilities: &mcp.ClientCapabilities{
			//lint:ignore SA1019 roots stay offered to servers of older protocol versions during the deprecation window
			RootsV2:     &mcp.RootCapabilities{ListChanged: true},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		ElicitationHandler: s.elicit,
		//lint:ignore SA1019 sampling stays offered to servers of older protocol versions during the deprecation window
		CreateMessageHandler:       s.sample,
		ElicitationCompleteHandler: s.elicitationComplete,
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { s.relist() },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { s.relist() },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { s.relist() },
	})
	var (
		t   mcp.Transport
		cmd *exec.Cmd
	)
	if s.cfg.Transport == core.MCPStdio {
		var err error
		if t, cmd, err = s.m.stdioTransport(ctx, s.cfg, s.log); err != nil {
			return nil, nil, fmt.Errorf("start: %w", s.scrubErr(err))
		}
	} else {
		if s.oauth != nil {
			s.oauth.load(ctx)
		}
		t = httpTransport(s.cfg, s.oauth)
	}
	cs, err := client.Connect(ctx, t, nil)
	err = s.scrubErr(err)
	if err != nil {
		if cmd != nil {
			killGroup(cmd)
			if cmd.Process != nil {
				_ = cmd.Wait()
			}
		}
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	if cmd != nil && cmd.Process != nil {
		if err := sandbox.LowerPriority(cmd.Process.Pid); err != nil {
			s.log.Warn("mcp server runs at the kernel's priority", "err", err)
		}
	}
	tools, err := listTools(ctx, cs)
	if err != nil {
		err = s.scrubErr(err)
		_ = cs.Close()
		if cmd != nil {
			killGroup(cmd)
		}
		return nil, nil, err
	}
	cat, err := listCatalog(ctx, cs)
	if err != nil {
		// Prompts and resources are extras: the tools still work.
		s.log.Warn("list mcp prompts and resources", "err", s.scrubErr(err))
	}
	version := ""
	if r := cs.InitializeResult(); r != nil {
		version = r.ProtocolVersion
	}
	s.mu.Lock()
	s.session, s.tools, s.wasUp = cs, tools, true
	s.mu.Unlock()
	s.set(func(st *core.MCPServerState) {
		*st = core.MCPServerState{Status: core.MCPReady, ProtocolVersion: version, Tools: toolStates(tools)}
		cat.apply(st)
	})
	s.log.Info("mcp server ready", "protocol_version", version, "tools", len(tools))
	return cs, cmd, nil
}

// serve waits for the session to end, refreshing the tool list when the
// server says it changed.
func (s *server) serve(cs *mcp.ClientSession) endReason {
	died := make(chan struct{})
	go func() {
		_ = cs.Wait()
		close(died)
	}()
	for {
		select {
		case <-s.ctx.Done():
			return endStopped
		case <-s.restart:
			return endRestart
		case <-died:
			return endDied
		case <-s.authLost:
			return endAuthLost
		case <-s.listed:
			ctx, cancel := context.WithTimeout(s.ctx, s.m.cfg.ConnectTimeout)
			tools, err := listTools(ctx, cs)
			var cat serverCatalog
			var catErr error
			if err == nil {
				cat, catErr = listCatalog(ctx, cs)
			}
			cancel()
			if err != nil {
				s.log.Warn("refresh mcp tool list", "err", s.scrubErr(err))
				continue
			}
			if catErr != nil {
				s.log.Warn("refresh mcp prompts and resources", "err", s.scrubErr(catErr))
			}
			s.mu.Lock()
			s.tools = tools
			s.mu.Unlock()
			s.set(func(st *core.MCPServerState) {
				st.Tools = toolStates(tools)
				if catErr == nil {
					cat.apply(st)
				}
			})
			s.log.Info("mcp lists changed", "tools", len(tools), "prompts", len(cat.prompts), "resources", len(cat.resources))
		}
	}
}

// relist asks serve to fetch the lists again (a list_changed notification).
func (s *server) relist() {
	select {
	case s.listed <- struct{}{}:
	default:
	}
}

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

func toolStates(tools []*mcp.Tool) []core.MCPToolState {
	out := make([]core.MCPToolState, 0, len(tools))
	for _, t := range tools {
		out = append(out, core.MCPToolState{Name: t.Name, Description: t.Description, ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint})
	}
	return out
}
