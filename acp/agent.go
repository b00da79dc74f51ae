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
	// OpenURL opens a sign-in URL in the person's browser (authenticate
	// with an MCP server's method); nil: authenticate answers with the URL
	// to open instead.
	OpenURL func(url string) error
}

// Agent is one ACP connection's agent.
type Agent struct {
	k    *client.Client
	conn *conn
	opts Options
	log  *slog.Logger

	ctx       context.Context // the connection's
	notices   bool            // the client presents notice updates (session.notices)
	watchOnce sync.Once       // watchMCP, started with the first session

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
	a.ctx = ctx
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
			s.mcp.detachAll(dctx)
		}
	}()
	return a.conn.serve(ctx, r)
}

// decode reads a request's params into v: absent params are {}, and params
// that do not fit v are invalid params (-32602).
func decode(params json.RawMessage, v any) error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("invalid params: %v", err)
	}
	return nil
}

// typed adapts a handler of typed params P to the connection: the params
// are decoded first (a bad one is invalid params, -32602).
func typed[P, R any](ctx context.Context, params json.RawMessage, f func(context.Context, *P) (R, error)) (any, error) {
	var p P
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	r, err := f(ctx, &p)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (a *Agent) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "initialize":
		return typed(ctx, params, a.initialize)
	case "authenticate":
		return typed(ctx, params, a.authenticate)
	case "session/new":
		return typed(ctx, params, a.newSession)
	case "session/load":
		return typed(ctx, params, func(ctx context.Context, p *loadSessionRequest) (loadSessionResponse, error) {
			return a.loadSession(ctx, p, true)
		})
	case "session/resume":
		return typed(ctx, params, func(ctx context.Context, p *loadSessionRequest) (loadSessionResponse, error) {
			return a.loadSession(ctx, p, false)
		})
	case "session/list":
		return typed(ctx, params, a.listSessions)
	case "session/close":
		return typed(ctx, params, a.closeSession)
	case "session/delete":
		return typed(ctx, params, a.deleteSession)
	case "session/prompt":
		return typed(ctx, params, a.prompt)
	case "session/cancel":
		return typed(ctx, params, a.cancel)
	case "session/set_mode":
		return typed(ctx, params, a.setMode)
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "method not found: " + method}
}

func (a *Agent) prompt(ctx context.Context, p *promptRequest) (promptResponse, error) {
	s, err := a.session(p.SessionID)
	if err != nil {
		return promptResponse{}, err
	}
	res, err := s.prompt(ctx, p.Prompt)
	if errors.Is(context.Cause(ctx), errRequestCancelled) {
		// $/cancel_request of a prompt: as session/cancel.
		if cerr := s.cancelTurn(context.WithoutCancel(ctx)); cerr != nil {
			a.log.Warn("acp: stop the turn of a cancelled prompt request", "session_id", s.id, "err", cerr)
		}
	}
	return res, err
}

// cancel is session/cancel (a notification: its error is only logged).
func (a *Agent) cancel(ctx context.Context, p *sessionRequest) (empty, error) {
	s, err := a.session(p.SessionID)
	if err != nil {
		return empty{}, err
	}
	return empty{}, s.cancelTurn(ctx)
}

func (a *Agent) setMode(ctx context.Context, p *setModeRequest) (empty, error) {
	s, err := a.session(p.SessionID)
	if err != nil {
		return empty{}, err
	}
	return empty{}, s.setMode(ctx, p.ModeID)
}

func (a *Agent) initialize(ctx context.Context, p *initializeRequest) (initializeResponse, error) {
	if p.ProtocolVersion == nil {
		return initializeResponse{}, invalidParams("initialize: protocolVersion is required")
	}
	a.notices = p.ClientCapabilities.notices()
	if p.ClientInfo != nil {
		a.log.Info("acp client", "name", p.ClientInfo.Name, "version", p.ClientInfo.Version, "protocol_version", *p.ProtocolVersion)
	}
	// Version negotiation: we answer with the one version we speak; a client
	// that cannot speak it closes the connection.
	return initializeResponse{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: agentCapabilities{
			LoadSession: true,
			PromptCapabilities: promptCapabilities{
				Image:           a.imagesAccepted(ctx),
				Audio:           false,
				EmbeddedContext: true,
			},
			McpCapabilities: mcpCapabilities{HTTP: true, SSE: false},
		},
		AuthMethods: a.authMethods(ctx),
		AgentInfo:   implementation{Name: "foya", Title: "Foya", Version: a.opts.Version},
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
