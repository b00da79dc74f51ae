package mcp

import (
	"context"
	"errors"
	"fmt"
	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/pubsub"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Config wires an Service.
type Config struct {
	Store   core.MCPStore
	Runtime core.MCPRuntime
	// Auth signs HTTP servers in with OAuth (loginMcpServer,
	// logoutMcpServer, the callback); optional.
	Auth core.MCPAuthRuntime
	// Content gives the servers' prompts and resources (prompt expansion,
	// resources attached to messages); optional.
	Content core.MCPContentRuntime
	// Broker receives catalog_updated on every change; optional.
	Broker *pubsub.Broker
	Logger *slog.Logger
	// SessionExists checks a session id for AttachSession (NOT_FOUND when
	// missing); without it every id is accepted.
	SessionExists func(ctx context.Context, id string) error
}

// Service is the catalog of MCP servers: kernel configuration kept in
// the MCP store, applied to the MCP runtime. Every mutation validates,
// saves, applies and then broadcasts catalog_updated; one that fails
// changes nothing. It is safe for concurrent use.
type Service struct {
	store   core.MCPStore
	runtime core.MCPRuntime
	auth    core.MCPAuthRuntime
	content core.MCPContentRuntime
	broker  *pubsub.Broker
	log     *slog.Logger

	exists  func(ctx context.Context, id string) error
	stopSub func()

	mu      sync.Mutex
	servers []core.MCPServerConfig
	// bySession holds the servers attached to one session, in attach
	// order. They live in memory only: their secrets are never written.
	bySession map[string][]core.MCPServerConfig
	toggles   sessionToggles
}

// New loads the stored servers and starts the enabled ones.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Runtime == nil {
		return nil, errors.New("mcp service: store and runtime are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	servers, err := cfg.Store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("load mcp servers: %w", err)
	}
	s := &Service{store: cfg.Store, runtime: cfg.Runtime, auth: cfg.Auth, content: cfg.Content, broker: cfg.Broker, log: log, servers: servers,
		exists: cfg.SessionExists, bySession: map[string][]core.MCPServerConfig{}, stopSub: func() {}}
	s.runtime.Apply(ctx, s.runtimeSet())
	if cfg.Broker != nil {
		// A deleted session (and each of its deleted descendants) takes its
		// servers with it.
		sub := cfg.Broker.SubscribeKernel()
		done, quit := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-quit:
					return
				case ev := <-sub.C:
					if ev.Type == core.KernelSessionDeleted && ev.SessionID != "" {
						s.DetachAll(context.Background(), ev.SessionID)
						s.forgetToggles(ev.SessionID)
					}
				}
			}
		}()
		var once sync.Once
		s.stopSub = func() { once.Do(func() { sub.Close(); close(quit); <-done }) }
	}
	return s, nil
}

// Close stops following session deletions. Stopping the servers is the
// runtime's business (it stops them all when the kernel stops).
func (s *Service) Close() { s.stopSub() }

func (s *Service) snapshot() []core.MCPServerConfig {
	out := make([]core.MCPServerConfig, len(s.servers))
	for i, c := range s.servers {
		out[i] = c.Clone()
	}
	return out
}

// runtimeSet is every server the runtime should run: the kernel-wide ones
// and those attached to sessions. Callers hold s.mu or own s.
func (s *Service) runtimeSet() []core.MCPServerConfig {
	out := s.snapshot()
	ids := make([]string, 0, len(s.bySession))
	for id := range s.bySession {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		for _, c := range s.bySession[id] {
			out = append(out, c.Clone())
		}
	}
	return out
}

// find returns a server, kernel-wide or attached to a session.
func (s *Service) find(id string) (core.MCPServerConfig, bool) {
	if i := s.index(id); i >= 0 {
		return s.servers[i].Clone(), true
	}
	for _, list := range s.bySession {
		for _, c := range list {
			if c.ID == id {
				return c.Clone(), true
			}
		}
	}
	return core.MCPServerConfig{}, false
}

// List returns every server, in creation order.
func (s *Service) List(ctx context.Context) []core.MCPServer {
	s.syncQuiet(ctx)
	s.mu.Lock()
	servers := s.snapshot()
	s.mu.Unlock()
	out := make([]core.MCPServer, len(servers))
	for i, c := range servers {
		out[i] = redactMCP(c, s.runtime.State(c.ID))
	}
	return out
}

// Server returns one server; NOT_FOUND when missing.
func (s *Service) Server(ctx context.Context, id string) (core.MCPServer, error) {
	s.syncQuiet(ctx)
	s.mu.Lock()
	c, ok := s.find(id)
	s.mu.Unlock()
	if !ok {
		return core.MCPServer{}, core.Errorf(core.CodeNotFound, "MCP server %s not found", id)
	}
	return redactMCP(c, s.runtime.State(c.ID)), nil
}

func (s *Service) index(id string) int {
	return slices.IndexFunc(s.servers, func(c core.MCPServerConfig) bool { return c.ID == id })
}

// Create adds a server and starts it when enabled (the default).
func (s *Service) Create(ctx context.Context, in core.MCPServerInput) (core.MCPServer, error) {
	c := core.MCPServerConfig{ID: core.NewID("mcp"), Enabled: true}
	applyMCPInput(&c, in, true)
	return s.commit(ctx, c.ID, func(list []core.MCPServerConfig) ([]core.MCPServerConfig, error) {
		if len(list) >= core.MaxMCPServers {
			return nil, core.Errorf(core.CodeBadInput, "the kernel already has %d MCP servers, the limit (MaxMCPServers); remove one with deleteMcpServer (`foya mcp remove NAME`) first", len(list))
		}
		if err := validateMCP(c, list); err != nil {
			return nil, err
		}
		return append(list, c), nil
	})
}

// Update changes a server; a running server is restarted with the new
// configuration.
func (s *Service) Update(ctx context.Context, id string, in core.MCPServerInput) (core.MCPServer, error) {
	return s.commit(ctx, id, func(list []core.MCPServerConfig) ([]core.MCPServerConfig, error) {
		i := slices.IndexFunc(list, func(c core.MCPServerConfig) bool { return c.ID == id })
		if i < 0 {
			return nil, s.notKernelWide(id)
		}
		c := list[i].Clone()
		applyMCPInput(&c, in, false)
		if err := validateMCP(c, slices.Delete(slices.Clone(list), i, i+1)); err != nil {
			return nil, err
		}
		if err := mcpHeaderBindingError(list[i], c, in); err != nil {
			return nil, err
		}
		list[i] = c
		return list, nil
	})
}

// Delete removes a server and stops it.
func (s *Service) Delete(ctx context.Context, id string) error {
	_, err := s.commit(ctx, "", func(list []core.MCPServerConfig) ([]core.MCPServerConfig, error) {
		i := slices.IndexFunc(list, func(c core.MCPServerConfig) bool { return c.ID == id })
		if i < 0 {
			return nil, s.notKernelWide(id)
		}
		return slices.Delete(list, i, i+1), nil
	})
	if err == nil {
		s.Changed(id)
		if s.auth != nil {
			// Its tokens go with it (revoked where offered).
			if lerr := s.auth.Logout(ctx, id); lerr != nil {
				s.log.Warn("forget the OAuth tokens of a deleted MCP server", "mcp_server_id", id, "err", lerr)
			}
		}
	}
	return err
}

// Restart stops and starts a server again (clearing FAILED). A disabled
// server is a CONFLICT: enable it with updateMcpServer instead.
func (s *Service) Restart(ctx context.Context, id string) (core.MCPServer, error) {
	srv, err := s.Server(ctx, id)
	if err != nil {
		return core.MCPServer{}, err
	}
	if !srv.Enabled {
		return core.MCPServer{}, core.Errorf(core.CodeConflict, "MCP server %q is disabled; enable it with updateMcpServer(input: {enabled: true})", srv.Name)
	}
	if err := s.runtime.Restart(ctx, id); err != nil {
		return core.MCPServer{}, err
	}
	s.Changed(id)
	return s.Server(ctx, id)
}

// commit runs a mutation on a copy of the list, saves it, applies it to the
// runtime and broadcasts the change; returns server id (when not empty).
func (s *Service) commit(ctx context.Context, id string, mutate func([]core.MCPServerConfig) ([]core.MCPServerConfig, error)) (core.MCPServer, error) {
	s.syncQuiet(ctx)
	s.mu.Lock()
	var next []core.MCPServerConfig
	for attempt := 0; ; attempt++ {
		var err error
		if next, err = mutate(s.snapshot()); err != nil {
			s.mu.Unlock()
			return core.MCPServer{}, err
		}
		err = s.store.Save(ctx, next)
		if err == nil {
			break
		}
		if core.IsStale(err) && attempt == 0 {
			// Another kernel saved first: apply the change to its list.
			verr := s.reloadLocked(ctx)
			if verr == nil {
				continue
			}
			err = errors.Join(err, verr)
		}
		s.mu.Unlock()
		return core.MCPServer{}, fmt.Errorf("save mcp servers: %w", err)
	}
	s.servers = next
	snap := s.runtimeSet()
	s.mu.Unlock()
	s.runtime.Apply(ctx, snap)
	if id == "" {
		return core.MCPServer{}, nil
	}
	s.Changed(id)
	return s.Server(ctx, id)
}

// Changed broadcasts catalog_updated for a server; the runtime calls it on
// every status change.
func (s *Service) Changed(id string) {
	if s.broker != nil {
		s.broker.PublishKernel(core.KernelEvent{Type: core.KernelCatalogUpdated, McpServerID: id, At: time.Now().UTC()})
	}
}

// notKernelWide is the error for an id that is not a kernel-wide server;
// callers hold s.mu.
func (s *Service) notKernelWide(id string) error {
	for sid, list := range s.bySession {
		for _, c := range list {
			if c.ID == id {
				return core.Errorf(core.CodeConflict, "MCP server %s is attached to session %s only: attach it again with attachSessionMcpServer to change it, detachSessionMcpServer to remove it", id, sid)
			}
		}
	}
	return core.Errorf(core.CodeNotFound, "MCP server %s not found", id)
}

// SessionServers lists the servers attached to a session, in attach order.
func (s *Service) SessionServers(ctx context.Context, sessionID string) []core.MCPServer {
	s.mu.Lock()
	list := slices.Clone(s.bySession[sessionID])
	s.mu.Unlock()
	out := make([]core.MCPServer, len(list))
	for i, c := range list {
		out[i] = redactMCP(c, s.runtime.State(c.ID))
	}
	return out
}

// AttachSession attaches a server to one session: its tools are offered
// only in that session and its sub-agent sessions. A server of the same
// name already attached to the session is replaced (restarted only when
// its configuration changed), so a client re-attaching its servers after a
// reconnect is idempotent. The name must not clash with a kernel-wide
// server (CONFLICT). Session servers are kept in memory only, never
// written to disk; they stop when the session is deleted, when they are
// detached, or when the kernel stops.
func (s *Service) AttachSession(ctx context.Context, sessionID string, in core.MCPServerInput) (core.MCPServer, error) {
	if sessionID == "" {
		return core.MCPServer{}, core.Errorf(core.CodeBadInput, "sessionId must not be empty")
	}
	if s.exists != nil {
		if err := s.exists(ctx, sessionID); err != nil {
			return core.MCPServer{}, err
		}
	}
	c := core.MCPServerConfig{Enabled: true, SessionID: sessionID}
	applyMCPInput(&c, in, true)
	if !c.Enabled {
		return core.MCPServer{}, core.Errorf(core.CodeBadInput, "input.enabled: a session MCP server cannot be disabled; detach it with detachSessionMcpServer")
	}
	s.mu.Lock()
	list := slices.Clone(s.bySession[sessionID])
	i := slices.IndexFunc(list, func(o core.MCPServerConfig) bool { return o.Name == c.Name })
	others := s.snapshot()
	for j, o := range list {
		if j != i {
			others = append(others, o)
		}
	}
	if err := validateMCP(c, others); err != nil {
		s.mu.Unlock()
		return core.MCPServer{}, err
	}
	if i < 0 && len(list) >= core.MaxSessionMCPServers {
		s.mu.Unlock()
		return core.MCPServer{}, core.Errorf(core.CodeBadInput, "session %s already has %d MCP servers attached, the limit per session (MaxSessionMCPServers); detach one with detachSessionMcpServer first", sessionID, core.MaxSessionMCPServers)
	}
	if i >= 0 {
		c.ID = list[i].ID // same name: replaced in place
		list[i] = c
	} else {
		c.ID = core.NewID("mcp")
		list = append(list, c)
	}
	s.bySession[sessionID] = list
	snap := s.runtimeSet()
	s.mu.Unlock()
	s.runtime.Apply(ctx, snap)
	s.log.Info("MCP server attached to a session", "session_id", sessionID, "mcp_server", c.Name, "mcp_server_id", c.ID, "transport", c.Transport)
	s.Changed(c.ID)
	return s.Server(ctx, c.ID)
}

// ValidateSessionServers checks servers to be attached to a new session,
// against the kernel-wide servers and each other, before the session
// exists; errors name input.mcpServers[i].<field>.
func (s *Service) ValidateSessionServers(ins []core.MCPServerInput) error {
	if len(ins) > core.MaxSessionMCPServers {
		return core.Errorf(core.CodeBadInput, "input.mcpServers: %d servers, over the limit of %d per session (MaxSessionMCPServers)", len(ins), core.MaxSessionMCPServers)
	}
	s.mu.Lock()
	others := s.snapshot()
	s.mu.Unlock()
	seen := map[string]int{}
	for i, in := range ins {
		c := core.MCPServerConfig{Enabled: true}
		applyMCPInput(&c, in, true)
		prefix := fmt.Sprintf("input.mcpServers[%d].", i)
		if j, dup := seen[c.Name]; dup {
			return core.Errorf(core.CodeBadInput, "%sname: %q is also the name of input.mcpServers[%d]; names must be unique", prefix, c.Name, j)
		}
		seen[c.Name] = i
		if !c.Enabled {
			return core.Errorf(core.CodeBadInput, "%senabled: a session MCP server cannot be disabled; leave it out instead", prefix)
		}
		if err := validateMCP(c, others); err != nil {
			var e *core.Error
			if errors.As(err, &e) {
				return core.Errorf(e.Code, "%s", strings.ReplaceAll(e.Message, "input.", prefix))
			}
			return err
		}
	}
	return nil
}

// DetachSession stops a server attached to a session and removes it;
// NOT_FOUND when the session has no such server.
func (s *Service) DetachSession(ctx context.Context, sessionID, id string) error {
	s.mu.Lock()
	list := s.bySession[sessionID]
	i := slices.IndexFunc(list, func(c core.MCPServerConfig) bool { return c.ID == id })
	if i < 0 {
		s.mu.Unlock()
		return core.Errorf(core.CodeNotFound, "MCP server %s is not attached to session %s", id, sessionID)
	}
	list = slices.Delete(slices.Clone(list), i, i+1)
	if len(list) == 0 {
		delete(s.bySession, sessionID)
	} else {
		s.bySession[sessionID] = list
	}
	snap := s.runtimeSet()
	s.mu.Unlock()
	s.runtime.Apply(ctx, snap)
	s.log.Info("MCP server detached from a session", "session_id", sessionID, "mcp_server_id", id)
	s.Changed(id)
	return nil
}

// DetachAll stops every server attached to a session (it was deleted).
func (s *Service) DetachAll(ctx context.Context, sessionID string) {
	s.mu.Lock()
	list := s.bySession[sessionID]
	if len(list) == 0 {
		s.mu.Unlock()
		return
	}
	delete(s.bySession, sessionID)
	snap := s.runtimeSet()
	s.mu.Unlock()
	s.runtime.Apply(ctx, snap)
	for _, c := range list {
		s.log.Info("MCP server of a deleted session stopped", "session_id", sessionID, "mcp_server_id", c.ID)
		s.Changed(c.ID)
	}
}

func applyMCPInput(c *core.MCPServerConfig, in core.MCPServerInput, create bool) {
	c.Name = strings.TrimSpace(in.Name)
	if c.Transport != in.Transport && !create {
		// A transport change drops what only the old transport used.
		c.Command, c.Args, c.Env, c.URL, c.Headers = "", nil, nil, "", nil
		c.OAuthClientID, c.OAuthClientSecret = "", ""
	}
	c.Transport = in.Transport
	if in.Command != nil {
		c.Command = strings.TrimSpace(*in.Command)
	}
	if in.Args != nil {
		c.Args = slices.Clone(in.Args)
	}
	if in.Env != nil {
		c.Env = slices.Clone(in.Env)
	}
	if in.URL != nil {
		c.URL = strings.TrimSpace(*in.URL)
	}
	if in.Headers != nil {
		c.Headers = slices.Clone(in.Headers)
	}
	if in.Enabled != nil {
		c.Enabled = *in.Enabled
	}
	if in.TimeoutSeconds != nil {
		c.TimeoutSeconds = *in.TimeoutSeconds
	}
	if in.OAuthClientID != nil {
		c.OAuthClientID = strings.TrimSpace(*in.OAuthClientID)
	}
	if in.OAuthClientSecret != nil {
		c.OAuthClientSecret = *in.OAuthClientSecret
	}
}

var headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// validateMCP checks a server as it would be stored against the others;
// BAD_INPUT names the field, CONFLICT a duplicate name. Messages never
// contain env or header values.
func validateMCP(c core.MCPServerConfig, others []core.MCPServerConfig) error {
	var p core.Problems
	switch {
	case c.Name == "":
		p.Add("input.name", "must not be empty")
	case len([]rune(c.Name)) > 64:
		p.Add("input.name", "at most 64 characters")
	case strings.ContainsFunc(c.Name, func(r rune) bool { return !unicode.IsPrint(r) }):
		p.Add("input.name", "must not contain control characters")
	}
	checkMCPTransport(&p, c)
	checkMCPArgsEnvHeaders(&p, c)
	checkMCPOAuth(&p, c)
	if c.TimeoutSeconds < 0 || c.TimeoutSeconds > core.MaxMCPTimeout {
		p.Add("input.timeoutSeconds", "between 1 and %d (0 or null: the default of %d)", core.MaxMCPTimeout, core.DefaultMCPTimeout)
	}
	if err := p.Err(); err != nil {
		return err
	}
	for _, o := range others {
		if o.Name == c.Name {
			return core.Errorf(core.CodeConflict, "an MCP server named %q already exists (%s); choose another name", c.Name, o.ID)
		}
	}
	return nil
}

// checkMCPTransport checks the fields of c's transport: a command for
// STDIO, a URL for HTTP, and none of the other transport's fields.
func checkMCPTransport(p *core.Problems, c core.MCPServerConfig) {
	switch c.Transport {
	case core.MCPStdio:
		if c.Command == "" {
			p.Add("input.command", "required for a STDIO server: the program to run, e.g. npx")
		}
		if c.URL != "" {
			p.Add("input.url", "only HTTP servers have a URL")
		}
		if len(c.Headers) > 0 {
			p.Add("input.headers", "only HTTP servers send headers; use env for a STDIO server")
		}
	case core.MCPHTTP:
		u, err := url.Parse(c.URL)
		switch {
		case c.URL == "":
			p.Add("input.url", "required for an HTTP server: its Streamable HTTP endpoint, e.g. https://example.com/mcp")
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "":
			p.Add("input.url", "must be an http or https URL with a host")
		case u.User != nil:
			p.Add("input.url", "must not contain credentials; send them with headers")
		}
		if c.Command != "" || len(c.Args) > 0 {
			p.Add("input.command", "only STDIO servers run a command")
		}
		if len(c.Env) > 0 {
			p.Add("input.env", "only STDIO servers get an environment; use headers for an HTTP server")
		}
	default:
		p.Add("input.transport", "unknown transport %q (known: STDIO, HTTP)", c.Transport)
	}
}

// checkMCPArgsEnvHeaders checks c's arguments, environment and headers:
// no NUL bytes, valid and unique keys, no line breaks in header values.
func checkMCPArgsEnvHeaders(p *core.Problems, c core.MCPServerConfig) {
	for _, a := range c.Args {
		if strings.ContainsRune(a, 0) {
			p.Add("input.args", "must not contain NUL bytes")
			break
		}
	}
	seen := map[string]bool{}
	for _, kv := range c.Env {
		switch {
		case !core.EnvNameRE.MatchString(kv.Key):
			p.Add("input.env", "key %q: letters, digits and underscores, not starting with a digit", kv.Key)
		case seen[kv.Key]:
			p.Add("input.env", "key %q given twice", kv.Key)
		case strings.ContainsRune(kv.Value, 0):
			p.Add("input.env", "value of %q must not contain NUL bytes", kv.Key)
		}
		seen[kv.Key] = true
	}
	seen = map[string]bool{}
	for _, kv := range c.Headers {
		k := strings.ToLower(kv.Key)
		switch {
		case !headerNameRE.MatchString(kv.Key):
			p.Add("input.headers", "key %q is not a valid HTTP header name", kv.Key)
		case seen[k]:
			p.Add("input.headers", "key %q given twice", kv.Key)
		case strings.ContainsAny(kv.Value, "\r\n\x00"):
			p.Add("input.headers", "value of %q must not contain line breaks or NUL bytes", kv.Key)
		}
		seen[k] = true
	}
}

// checkMCPOAuth checks c's hand-registered OAuth client.
func checkMCPOAuth(p *core.Problems, c core.MCPServerConfig) {
	if c.Transport != core.MCPHTTP && (c.OAuthClientID != "" || c.OAuthClientSecret != "") {
		p.Add("input.oauthClientId", "only HTTP servers sign in with OAuth")
	}
	if strings.ContainsFunc(c.OAuthClientID+c.OAuthClientSecret, func(r rune) bool { return !unicode.IsPrint(r) }) || len(c.OAuthClientID) > 512 || len(c.OAuthClientSecret) > 4096 {
		p.Add("input.oauthClientId", "oauthClientId (at most 512 bytes) and oauthClientSecret (at most 4096) must be printable text")
	}
	if c.OAuthClientSecret != "" && c.OAuthClientID == "" {
		p.Add("input.oauthClientSecret", "needs oauthClientId: a secret belongs to a client registered by hand")
	}
}
