package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/foya-dev/foya/client"
)

// The session requests: session/new, load, resume, list, close and delete.

// servers checks the working directory and converts the client's MCP
// servers for the kernel.
func (p *sessionPlace) servers() ([]client.McpServerInput, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return nil, err
	}
	return mcpInputs(p.McpServers)
}

func checkCwd(cwd string) error {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return invalidParams("cwd %q must be an absolute path", cwd)
	}
	return nil
}

// mcpInputs turns the client's MCP servers into McpServerInputs for the
// kernel (attached to the one session): stdio and Streamable HTTP; SSE is
// refused (mcpCapabilities.sse is false).
func mcpInputs(servers []json.RawMessage) ([]client.McpServerInput, error) {
	out := make([]client.McpServerInput, 0, len(servers))
	for i, raw := range servers {
		var m mcpServer
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, invalidParams("mcpServers[%d]: %v", i, err)
		}
		in, err := mcpInput(i, &m)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// mcpInput converts the client's i-th MCP server.
func mcpInput(i int, m *mcpServer) (client.McpServerInput, error) {
	if strings.TrimSpace(m.Name) == "" {
		return client.McpServerInput{}, invalidParams("mcpServers[%d]: name is required", i)
	}
	in := client.McpServerInput{Name: m.Name}
	switch m.Type {
	case "", "stdio":
		if m.Command == "" {
			return in, invalidParams("mcpServers[%d] (%s): command is required for a stdio server", i, m.Name)
		}
		args := m.Args
		if args == nil {
			args = []string{}
		}
		in.Transport, in.Command, in.Args, in.Env = client.McpTransportStdio, &m.Command, args, keyValues(m.Env)
	case "http":
		in.Transport, in.Url, in.Headers = client.McpTransportHttp, &m.URL, keyValues(m.Headers)
	case "sse":
		return in, invalidParams("mcpServers[%d] (%s): SSE MCP servers are not supported (mcpCapabilities.sse is false); use the server's Streamable HTTP endpoint (type \"http\") or stdio", i, m.Name)
	default:
		return in, invalidParams("mcpServers[%d] (%s): unsupported MCP server type %q (supported: stdio, http)", i, m.Name, m.Type)
	}
	return in, nil
}

func keyValues(nvs []nameValue) []client.KeyValueInput {
	out := make([]client.KeyValueInput, 0, len(nvs))
	for _, kv := range nvs {
		out = append(out, client.KeyValueInput{Key: kv.Name, Value: kv.Value})
	}
	return out
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

type gqlSession struct {
	ID           string
	Title        *string
	HeadSeq      int
	Phase        string
	ApprovalMode string
	AgentMode    string
	UpdatedAt    string
	Project      *gqlProject
	Tasks        []gqlTask
}

type gqlProject struct{ ID, Path string }

type gqlTask struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	Status string `json:"status"`
}

// fromSession is what the agent keeps of a session read with ACPSessionFields.
func fromSession(f *client.ACPSessionFields) gqlSession {
	gs := gqlSession{ID: f.Id, Title: f.Title, HeadSeq: f.HeadSeq, Phase: string(f.Phase),
		ApprovalMode: string(f.ApprovalMode), AgentMode: string(f.AgentMode), UpdatedAt: timeString(f.UpdatedAt)}
	if f.Project != nil {
		gs.Project = &gqlProject{f.Project.Id, f.Project.Path}
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

func (a *Agent) newSession(ctx context.Context, p *newSessionRequest) (newSessionResponse, error) {
	servers, err := p.servers()
	if err != nil {
		return newSessionResponse{}, err
	}
	projectID, err := a.findOrCreateProject(ctx, p.Cwd)
	if err != nil {
		return newSessionResponse{}, err
	}
	in := client.CreateSessionInput{ProjectId: &projectID}
	if len(servers) > 0 {
		in.McpServers = servers
	}
	r, err := client.ACPCreateSession(ctx, a.k, in)
	if err != nil {
		return newSessionResponse{}, mcpError(err)
	}
	s := a.open(fromSession(&r.CreateSession.ACPSessionFields), p.Cwd)
	ids := make([]string, 0, len(r.CreateSession.McpServers))
	for _, m := range r.CreateSession.McpServers {
		ids = append(ids, m.Id)
	}
	s.mcp.set(ids)
	s.mcp.wait(ctx)
	afterAnswer(ctx, func() { s.sendCommands(s.ctx) })
	return newSessionResponse{SessionID: s.id, Modes: s.modeState()}, nil
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
	a.watchOnce.Do(func() { go a.watchMCP(a.ctx) })
	return s
}

// loadSession is session/load (replay: the history is sent as updates)
// and session/resume.
func (a *Agent) loadSession(ctx context.Context, p *loadSessionRequest, replay bool) (loadSessionResponse, error) {
	servers, err := p.servers()
	if err != nil {
		return loadSessionResponse{}, err
	}
	gs, msgs, err := a.readSession(ctx, p.SessionID, replay)
	if err != nil {
		return loadSessionResponse{}, err
	}
	s := a.open(gs, p.Cwd)
	if err := s.mcp.attach(ctx, servers); err != nil {
		return loadSessionResponse{}, err
	}
	s.mcp.wait(ctx)
	if replay {
		s.replay(msgs)
	}
	if len(gs.Tasks) > 0 {
		s.sendPlan(gs.Tasks)
	}
	if gs.Phase == "TURN" {
		s.reopenPending(ctx, gs.HeadSeq)
	}
	afterAnswer(ctx, func() { s.sendCommands(s.ctx) })
	return loadSessionResponse{Modes: s.modeState()}, nil
}

// readSession reads a session, and its messages when withMessages.
func (a *Agent) readSession(ctx context.Context, id string, withMessages bool) (gqlSession, []gqlMessage, error) {
	notFound := &rpcError{Code: codeNotFound, Message: fmt.Sprintf("session %s not found", id)}
	if !withMessages {
		r, err := client.ACPSession(ctx, a.k, id)
		if err != nil {
			return gqlSession{}, nil, kernelError(err)
		}
		if r.Session == nil {
			return gqlSession{}, nil, notFound
		}
		return fromSession(&r.Session.ACPSessionFields), nil, nil
	}
	r, err := client.ACPSessionWithMessages(ctx, a.k, id)
	if err != nil && client.ErrorCode(err) == "BAD_INPUT" {
		r, err = a.sessionPaged(ctx, id) // too large for one response
	}
	if err != nil {
		return gqlSession{}, nil, kernelError(err)
	}
	if r.Session == nil {
		return gqlSession{}, nil, notFound
	}
	var msgs []gqlMessage
	for i := range r.Session.Messages {
		msgs = append(msgs, fromMessage(&r.Session.Messages[i].ACPMessageFields))
	}
	return fromSession(&r.Session.ACPSessionFields), msgs, nil
}

// listPage is how many sessions one session/list answer holds at most;
// its nextCursor (the last listed session's id) continues the list.
const listPage = 100

// listSessions reads the kernel's list a page of kernelPage at a time
// (sessions(first:, after:), a page too large for the kernel's response
// limit asked for again a quarter as long) from the session after the
// cursor, until it has listPage sessions of the cwd or the list ends.
func (a *Agent) listSessions(ctx context.Context, p *listSessionsRequest) (listSessionsResponse, error) {
	const kernelPage = 500
	out := listSessionsResponse{Sessions: []sessionInfo{}}
	var after *string
	if p.Cursor != "" {
		after = &p.Cursor
	}
	first := kernelPage
	for {
		r, err := client.ACPSessions(ctx, a.k, &first, after)
		if client.TooLargeForOneResponse(err) && first > 4 {
			first /= 4 // over the kernel's response limit
			continue
		}
		if err != nil && after != nil && client.ErrorCode(err) == "NOT_FOUND" {
			return listSessionsResponse{}, invalidParams("cursor %q names no session (deleted since the previous page?): list again without a cursor", p.Cursor)
		}
		if err != nil {
			return listSessionsResponse{}, kernelError(err)
		}
		for i := range r.Sessions {
			gs := &r.Sessions[i]
			after = &gs.Id
			if gs.Project == nil {
				continue // ACP sessions have a working directory
			}
			if p.Cwd != "" && filepath.Clean(gs.Project.Path) != filepath.Clean(p.Cwd) {
				continue
			}
			info := sessionInfo{SessionID: gs.Id, Cwd: gs.Project.Path, UpdatedAt: timeString(gs.UpdatedAt)}
			if gs.Title != nil {
				info.Title = *gs.Title
			}
			out.Sessions = append(out.Sessions, info)
			if len(out.Sessions) == listPage {
				if i < len(r.Sessions)-1 || len(r.Sessions) == first {
					out.NextCursor = gs.Id // more may follow
				}
				return out, nil
			}
		}
		if len(r.Sessions) < first {
			return out, nil
		}
	}
}

func (a *Agent) closeSession(ctx context.Context, p *sessionRequest) (empty, error) {
	s, err := a.session(p.SessionID)
	if err != nil {
		return empty{}, err
	}
	if err := s.cancelTurn(ctx); err != nil {
		return empty{}, err
	}
	a.mu.Lock()
	delete(a.sessions, p.SessionID)
	a.mu.Unlock()
	s.stop()
	s.mcp.detachAll(ctx)
	return empty{}, nil
}

// deleteSession deletes the Foya session irreversibly (deleteSession: its
// children, history and attached MCP servers go with it).
func (a *Agent) deleteSession(ctx context.Context, p *sessionRequest) (empty, error) {
	if p.SessionID == "" {
		return empty{}, invalidParams("sessionId is required")
	}
	if _, err := client.DeleteSession(ctx, a.k, p.SessionID, nil, nil); err != nil {
		return empty{}, kernelError(err)
	}
	a.mu.Lock()
	s := a.sessions[p.SessionID]
	delete(a.sessions, p.SessionID)
	a.mu.Unlock()
	if s != nil {
		s.mcp.set(nil) // the kernel stopped them with the session
		s.stop()
	}
	return empty{}, nil
}
