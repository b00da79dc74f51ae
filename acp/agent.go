// Package acp is Foya's Agent Client Protocol agent (protocol version 1):
// JSON-RPC 2.0 over stdio that an editor speaks, translated to the kernel's
// public GraphQL API. It imports no kernel package: it speaks to the kernel
// only through the typed client (package client, operations ACP* and the
// shared ones in client/operations.graphql).
package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/foya-dev/foya/client"
)

// ProtocolVersion is the ACP major version this agent speaks.
const ProtocolVersion = 1

// Options configure the agent.
type Options struct {
	Version string       // agentInfo.version
	Log     *slog.Logger // stderr only: stdout is the protocol
}

// Agent is one ACP connection's agent.
type Agent struct {
	k    *client.Client
	conn *conn
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	sessions map[string]*session
}

// Serve speaks ACP on r/w until r ends or ctx is cancelled.
func Serve(ctx context.Context, k *client.Client, r io.Reader, w io.Writer, opts Options) error {
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	a := &Agent{k: k, opts: opts, log: opts.Log, sessions: map[string]*session{}}
	a.conn = newConn(w, opts.Log, a.handle)
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		a.mu.Lock()
		ss := make([]*session, 0, len(a.sessions))
		for _, s := range a.sessions {
			ss = append(ss, s)
		}
		a.mu.Unlock()
		for _, s := range ss {
			s.stop()
		}
		// The client's MCP servers go with the connection.
		dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer dcancel()
		for _, s := range ss {
			s.detachMCP(dctx)
		}
	}()
	return a.conn.serve(ctx, r)
}

func decode(params json.RawMessage, v any) error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("invalid params: %v", err)
	}
	return nil
}

func (a *Agent) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "initialize":
		return a.initialize(ctx, params)
	case "authenticate":
		return struct{}{}, nil
	case "session/new":
		return a.newSession(ctx, params)
	case "session/load":
		return a.loadSession(ctx, params, true)
	case "session/resume":
		return a.loadSession(ctx, params, false)
	case "session/list":
		return a.listSessions(ctx, params)
	case "session/close":
		return a.closeSession(ctx, params)
	case "session/delete":
		return a.deleteSession(ctx, params)
	case "session/prompt":
		var p struct {
			SessionID string            `json:"sessionId"`
			Prompt    []json.RawMessage `json:"prompt"`
		}
		if err := decode(params, &p); err != nil {
			return nil, err
		}
		s, err := a.session(p.SessionID)
		if err != nil {
			return nil, err
		}
		res, err := s.prompt(ctx, p.Prompt)
		if errors.Is(context.Cause(ctx), errRequestCancelled) {
			// $/cancel_request of a prompt: as session/cancel.
			if cerr := s.cancelTurn(context.WithoutCancel(ctx)); cerr != nil {
				a.log.Warn("acp: stop the turn of a cancelled prompt request", "session_id", s.id, "err", cerr)
			}
		}
		return res, err
	case "session/cancel":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if err := decode(params, &p); err != nil {
			return nil, err
		}
		s, err := a.session(p.SessionID)
		if err != nil {
			return nil, err
		}
		return nil, s.cancelTurn(ctx)
	case "session/set_mode":
		var p struct {
			SessionID string `json:"sessionId"`
			ModeID    string `json:"modeId"`
		}
		if err := decode(params, &p); err != nil {
			return nil, err
		}
		s, err := a.session(p.SessionID)
		if err != nil {
			return nil, err
		}
		return struct{}{}, s.setMode(ctx, p.ModeID)
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "method not found: " + method}
}

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

func (a *Agent) initialize(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion *int `json:"protocolVersion"`
		ClientInfo      *implementation
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, invalidParams("initialize: protocolVersion is required")
	}
	if p.ClientInfo != nil {
		a.log.Info("acp client", "name", p.ClientInfo.Name, "version", p.ClientInfo.Version, "protocol_version", *p.ProtocolVersion)
	}
	// Version negotiation: we answer with the one version we speak; a client
	// that cannot speak it closes the connection.
	return map[string]any{
		"protocolVersion": ProtocolVersion,
		"agentCapabilities": map[string]any{
			"loadSession": true,
			"promptCapabilities": map[string]any{
				"image":           a.imagesAccepted(ctx),
				"audio":           false,
				"embeddedContext": true,
			},
			"mcpCapabilities": map[string]any{"http": true, "sse": false},
			"sessionCapabilities": map[string]any{
				"list":   map[string]any{},
				"resume": map[string]any{},
				"close":  map[string]any{},
				"delete": map[string]any{},
			},
		},
		"authMethods": []any{},
		"agentInfo":   implementation{Name: "foya", Title: "Foya", Version: a.opts.Version},
	}, nil
}

// imagesAccepted is false only when the kernel's default language model is
// known not to take images (capabilities.imageInput false); unknown counts
// as accepted, as in the kernel, which rejects images only on an explicit false.
func (a *Agent) imagesAccepted(ctx context.Context) bool {
	r, err := client.ACPDefaultLanguageModel(ctx, a.k)
	if err != nil {
		a.log.Debug("acp: read the default model's capabilities", "err", err)
		return true
	}
	if l := r.DefaultModels.Language; l != nil {
		for _, c := range r.Connections {
			for _, m := range c.Models {
				if c.Id == l.ConnectionId && m.Id == l.Model && m.Capabilities.ImageInput != nil {
					return *m.Capabilities.ImageInput
				}
			}
		}
	}
	return true
}

func (a *Agent) session(id string) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	if s == nil {
		return nil, &rpcError{Code: codeNotFound, Message: fmt.Sprintf("session %s is not open on this connection (use session/load or session/resume first)", id)}
	}
	return s, nil
}

// mcpInputs turns the client's MCP servers into McpServerInputs for the
// kernel (attached to the one session): stdio and Streamable HTTP; SSE is
// refused (mcpCapabilities.sse is false).
func mcpInputs(servers []json.RawMessage) ([]client.McpServerInput, error) {
	out := make([]client.McpServerInput, 0, len(servers))
	for i, raw := range servers {
		var m struct {
			Type    string   `json:"type"`
			Name    string   `json:"name"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
			URL     string   `json:"url"`
			Env     []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"env"`
			Headers []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"headers"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, invalidParams("mcpServers[%d]: %v", i, err)
		}
		if strings.TrimSpace(m.Name) == "" {
			return nil, invalidParams("mcpServers[%d]: name is required", i)
		}
		in := client.McpServerInput{Name: m.Name}
		switch m.Type {
		case "", "stdio":
			if m.Command == "" {
				return nil, invalidParams("mcpServers[%d] (%s): command is required for a stdio server", i, m.Name)
			}
			env := make([]client.KeyValueInput, 0, len(m.Env))
			for _, kv := range m.Env {
				env = append(env, client.KeyValueInput{Key: kv.Name, Value: kv.Value})
			}
			args := m.Args
			if args == nil {
				args = []string{}
			}
			in.Transport, in.Command, in.Args, in.Env = client.McpTransportStdio, &m.Command, args, env
		case "http":
			headers := make([]client.KeyValueInput, 0, len(m.Headers))
			for _, kv := range m.Headers {
				headers = append(headers, client.KeyValueInput{Key: kv.Name, Value: kv.Value})
			}
			in.Transport, in.Url, in.Headers = client.McpTransportHttp, &m.URL, headers
		case "sse":
			return nil, invalidParams("mcpServers[%d] (%s): SSE MCP servers are not supported (mcpCapabilities.sse is false); use the server's Streamable HTTP endpoint (type \"http\") or stdio", i, m.Name)
		default:
			return nil, invalidParams("mcpServers[%d] (%s): unsupported MCP server type %q (supported: stdio, http)", i, m.Name, m.Type)
		}
		out = append(out, in)
	}
	return out, nil
}

func checkCwd(cwd string) error {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return invalidParams("cwd %q must be an absolute path", cwd)
	}
	return nil
}

// sessionPlace is what session/new and session/load share: the working
// directory and the client's MCP servers.
type sessionPlace struct {
	Cwd        string            `json:"cwd"`
	McpServers []json.RawMessage `json:"mcpServers"`
}

// decodeSession decodes params into p (a sessionPlace or a struct that
// embeds one), checks the cwd and converts the MCP servers.
func decodeSession(params json.RawMessage, p interface{ place() *sessionPlace }) ([]client.McpServerInput, error) {
	if err := decode(params, p); err != nil {
		return nil, err
	}
	if err := checkCwd(p.place().Cwd); err != nil {
		return nil, err
	}
	return mcpInputs(p.place().McpServers)
}

func (s *sessionPlace) place() *sessionPlace { return s }

type gqlSession struct {
	ID           string
	Title        *string
	HeadSeq      int
	Phase        string
	ApprovalMode string
	AgentMode    string
	UpdatedAt    string
	Project      *struct{ ID, Path string }
	Tasks        []gqlTask
}

type gqlTask struct{ ID, Text, Status string }

// fromSession is what the agent keeps of a session read with ACPSessionFields.
func fromSession(f *client.ACPSessionFields) gqlSession {
	gs := gqlSession{ID: f.Id, Title: f.Title, HeadSeq: f.HeadSeq, Phase: string(f.Phase),
		ApprovalMode: string(f.ApprovalMode), AgentMode: string(f.AgentMode), UpdatedAt: timeString(f.UpdatedAt)}
	if f.Project != nil {
		gs.Project = &struct{ ID, Path string }{f.Project.Id, f.Project.Path}
	}
	for _, t := range f.Tasks {
		gs.Tasks = append(gs.Tasks, gqlTask{ID: t.Id, Text: t.Text, Status: string(t.Status)})
	}
	return gs
}

// timeString formats a Time as the kernel sends it (RFC 3339).
func timeString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

func (a *Agent) newSession(ctx context.Context, params json.RawMessage) (any, error) {
	var p sessionPlace
	servers, err := decodeSession(params, &p)
	if err != nil {
		return nil, err
	}
	projectID, err := a.findOrCreateProject(ctx, p.Cwd)
	if err != nil {
		return nil, err
	}
	in := client.CreateSessionInput{ProjectId: &projectID}
	if len(servers) > 0 {
		in.McpServers = servers
	}
	r, err := client.ACPCreateSession(ctx, a.k, in)
	if err != nil {
		return nil, mcpError(err)
	}
	s := a.open(fromSession(&r.CreateSession.ACPSessionFields), p.Cwd)
	ids := make([]string, 0, len(r.CreateSession.McpServers))
	for _, m := range r.CreateSession.McpServers {
		ids = append(ids, m.Id)
	}
	s.setMCP(ids)
	s.waitMCP(ctx)
	return map[string]any{"sessionId": s.id, "modes": s.modeState()}, nil
}

// mcpError maps a kernel error about the client's MCP servers: refused
// input (BAD_INPUT, or CONFLICT for a name the kernel already uses) is
// invalid params.
func mcpError(err error) error {
	var ce codedError
	if errors.As(err, &ce) && (ce.GraphQLCode() == "BAD_INPUT" || ce.GraphQLCode() == "CONFLICT") {
		return invalidParams("mcpServers refused by the kernel: %s", err.Error())
	}
	return kernelError(err)
}

func (a *Agent) findOrCreateProject(ctx context.Context, cwd string) (string, error) {
	cwd = filepath.Clean(cwd)
	r, err := client.Projects(ctx, a.k)
	if err != nil {
		return "", kernelError(err)
	}
	for _, p := range r.Projects {
		if filepath.Clean(p.Path) == cwd {
			return p.Id, nil
		}
	}
	cr, err := client.CreateProject(ctx, a.k, cwd)
	if err != nil {
		return "", kernelError(err)
	}
	return cr.CreateProject.Id, nil
}

// open registers the session on this connection and starts following its
// events after its head.
func (a *Agent) open(gs gqlSession, cwd string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	if old := a.sessions[gs.ID]; old != nil {
		old.updateMeta(gs)
		return old
	}
	if gs.Project != nil && gs.Project.Path != "" {
		cwd = gs.Project.Path
	}
	s := newSession(a, gs, cwd)
	a.sessions[gs.ID] = s
	s.start(gs.HeadSeq)
	return s
}

func (a *Agent) loadSession(ctx context.Context, params json.RawMessage, replay bool) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
		sessionPlace
	}
	servers, err := decodeSession(params, &p)
	if err != nil {
		return nil, err
	}
	var gs gqlSession
	var msgs []gqlMessage
	if replay {
		r, err := client.ACPSessionWithMessages(ctx, a.k, p.SessionID)
		if err != nil && client.ErrorCode(err) == "BAD_INPUT" {
			r, err = a.sessionPaged(ctx, p.SessionID) // too large for one response
		}
		if err != nil {
			return nil, kernelError(err)
		}
		if r.Session == nil {
			return nil, &rpcError{Code: codeNotFound, Message: fmt.Sprintf("session %s not found", p.SessionID)}
		}
		gs = fromSession(&r.Session.ACPSessionFields)
		for i := range r.Session.Messages {
			msgs = append(msgs, fromMessage(&r.Session.Messages[i].ACPMessageFields))
		}
	} else {
		r, err := client.ACPSession(ctx, a.k, p.SessionID)
		if err != nil {
			return nil, kernelError(err)
		}
		if r.Session == nil {
			return nil, &rpcError{Code: codeNotFound, Message: fmt.Sprintf("session %s not found", p.SessionID)}
		}
		gs = fromSession(&r.Session.ACPSessionFields)
	}
	s := a.open(gs, p.Cwd)
	if err := s.attachMCP(ctx, servers); err != nil {
		return nil, err
	}
	s.waitMCP(ctx)
	if replay {
		s.replay(msgs)
	}
	if len(gs.Tasks) > 0 {
		s.sendPlan(gs.Tasks)
	}
	if gs.Phase == "TURN" {
		s.reopenPending(ctx, gs.HeadSeq)
	}
	return map[string]any{"modes": s.modeState()}, nil
}

func (a *Agent) listSessions(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		Cwd    string `json:"cwd"`
		Cursor string `json:"cursor"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	r, err := client.ACPSessions(ctx, a.k)
	if err != nil {
		return nil, kernelError(err)
	}
	out := []map[string]any{}
	for _, gs := range r.Sessions {
		s := gqlSession{ID: gs.Id, Title: gs.Title, UpdatedAt: timeString(gs.UpdatedAt)}
		if gs.Project != nil {
			s.Project = &struct{ ID, Path string }{gs.Project.Id, gs.Project.Path}
		}
		if s.Project == nil {
			continue // ACP sessions have a working directory
		}
		if p.Cwd != "" && filepath.Clean(s.Project.Path) != filepath.Clean(p.Cwd) {
			continue
		}
		info := map[string]any{"sessionId": s.ID, "cwd": s.Project.Path}
		if s.Title != nil && *s.Title != "" {
			info["title"] = *s.Title
		}
		if s.UpdatedAt != "" {
			info["updatedAt"] = s.UpdatedAt
		}
		out = append(out, info)
	}
	return map[string]any{"sessions": out}, nil
}

func (a *Agent) closeSession(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	s, err := a.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	if err := s.cancelTurn(ctx); err != nil {
		return nil, err
	}
	a.mu.Lock()
	delete(a.sessions, p.SessionID)
	a.mu.Unlock()
	s.stop()
	s.detachMCP(ctx)
	return struct{}{}, nil
}

// deleteSession deletes the Foya session irreversibly (deleteSession: its
// children, history and attached MCP servers go with it).
func (a *Agent) deleteSession(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalidParams("sessionId is required")
	}
	if _, err := client.DeleteSession(ctx, a.k, p.SessionID); err != nil {
		return nil, kernelError(err)
	}
	a.mu.Lock()
	s := a.sessions[p.SessionID]
	delete(a.sessions, p.SessionID)
	a.mu.Unlock()
	if s != nil {
		s.setMCP(nil) // the kernel stopped them with the session
		s.stop()
	}
	return struct{}{}, nil
}

// codedError is an error carrying a GraphQL extensions.code.
type codedError interface{ GraphQLCode() string }

// kernelError maps a kernel error to a JSON-RPC error: NOT_FOUND to
// resource-not-found, BAD_INPUT to invalid params, anything else to an
// internal error carrying the kernel's message.
func kernelError(err error) error {
	if err == nil {
		return nil
	}
	var ce codedError
	if errors.As(err, &ce) {
		switch ce.GraphQLCode() {
		case "NOT_FOUND":
			return &rpcError{Code: codeNotFound, Message: err.Error()}
		case "BAD_INPUT":
			return &rpcError{Code: codeInvalidParams, Message: err.Error()}
		}
	}
	return &rpcError{Code: codeInternalError, Message: err.Error()}
}

func lower(s string) string { return strings.ToLower(s) }
