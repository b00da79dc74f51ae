package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/foya-dev/foya/client"
)

// The agent's own slash commands: /mcp shows the MCP servers a session
// uses, with their live status, and restarts, signs in to, signs out of,
// enables or disables one of them (docs/acp.md). The kernel's MCP prompts
// are offered as commands too (/mcp__<server>__<prompt>, expanded by the
// kernel). A prompt that is a command answers at once, without a turn.

// mcpUsage is the help /mcp gives for what it takes.
const mcpUsage = "`/mcp` lists this session's MCP servers; `/mcp restart NAME`, `/mcp login NAME`, `/mcp logout NAME`, `/mcp enable NAME` and `/mcp disable NAME` control one (enable and disable act on this session only)."

// isMCPCommand reports whether a prompt's text is the /mcp command (and
// not a /mcp__server__prompt, which the kernel expands).
func isMCPCommand(text string) bool {
	t := strings.TrimSpace(text)
	return t == "/mcp" || strings.HasPrefix(t, "/mcp ")
}

// mcpView is the MCP servers a session uses: the kernel-wide ones and the
// session's own, with those turned off for the session.
type mcpView struct {
	servers  []client.ACPMcpServerFields
	disabled map[string]bool
}

func (a *Agent) mcpView(ctx context.Context, sessionID string) (mcpView, error) {
	r, err := client.ACPMcpStatus(ctx, a.k, sessionID)
	if err != nil {
		return mcpView{}, err
	}
	v := mcpView{disabled: map[string]bool{}}
	for _, s := range r.McpServers {
		v.servers = append(v.servers, s.ACPMcpServerFields)
	}
	if r.Session != nil {
		for _, s := range r.Session.McpServers {
			if !slices.ContainsFunc(v.servers, func(o client.ACPMcpServerFields) bool { return o.Id == s.Id }) {
				v.servers = append(v.servers, s.ACPMcpServerFields)
			}
		}
		for _, id := range r.Session.DisabledMcpServerIds {
			v.disabled[id] = true
		}
	}
	return v, nil
}

// find names a server by its name (or, failing that, its id).
func (v mcpView) find(name string) (client.ACPMcpServerFields, bool) {
	for _, s := range v.servers {
		if s.Name == name {
			return s, true
		}
	}
	for _, s := range v.servers {
		if s.Id == name || strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return client.ACPMcpServerFields{}, false
}

// status is a server's state as this session sees it.
func (v mcpView) status(s client.ACPMcpServerFields) string {
	if v.disabled[s.Id] && s.Status != client.McpStatusDisabled {
		return "DISABLED for this session"
	}
	return string(s.Status)
}

// text is the /mcp listing.
func (v mcpView) text() string {
	if len(v.servers) == 0 {
		return "No MCP servers: add one with `foya mcp add`, in Foya web, or in this client's MCP settings."
	}
	var b strings.Builder
	b.WriteString("MCP servers of this session:\n")
	for _, s := range v.servers {
		fmt.Fprintf(&b, "- **%s**: %s", s.Name, v.status(s))
		if s.Status == client.McpStatusReady {
			fmt.Fprintf(&b, ", %d tools", len(s.Tools))
			if len(s.Prompts) > 0 {
				fmt.Fprintf(&b, ", %d prompts", len(s.Prompts))
			}
		}
		if e := deref(s.Error); e != "" {
			fmt.Fprintf(&b, " (%s)", e)
		}
		if s.Status == client.McpStatusNeedsAuth {
			b.WriteString(" — `/mcp login " + s.Name + "` to sign in")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n" + mcpUsage)
	return b.String()
}

// commands is what the session offers as slash commands: /mcp, then the
// prompts of its ready servers.
func (v mcpView) commands() []availableCommand {
	out := []availableCommand{{
		Name:        "mcp",
		Description: "Show this session's MCP servers and their status, or restart, sign in to, sign out of, enable or disable one.",
		Input:       &commandInput{Hint: "[restart|login|logout|enable|disable NAME]"},
	}}
	for _, s := range v.servers {
		if s.Status != client.McpStatusReady || v.disabled[s.Id] {
			continue
		}
		for _, p := range s.Prompts {
			c := availableCommand{Name: "mcp__" + s.Name + "__" + p.Name, Description: p.Description}
			if c.Description == "" {
				c.Description = "The prompt " + p.Name + " of MCP server " + s.Name + "."
			}
			var args []string
			for _, a := range p.Arguments {
				if a.Required {
					args = append(args, a.Name)
				} else {
					args = append(args, "["+a.Name+"]")
				}
			}
			if len(args) > 0 {
				c.Input = &commandInput{Hint: strings.Join(args, " ")}
			}
			out = append(out, c)
		}
	}
	return out
}

// mcpCommand runs /mcp … and answers with a message, without a turn.
func (s *session) mcpCommand(ctx context.Context, text string) (promptResponse, error) {
	s.chunk("agent_message_chunk", textBlock(s.runMCPCommand(ctx, strings.Fields(strings.TrimSpace(text))[1:])))
	s.sendCommands(ctx)
	return promptResponse{StopReason: "end_turn"}, nil
}

func (s *session) runMCPCommand(ctx context.Context, args []string) string {
	v, err := s.a.mcpView(ctx, s.id)
	if err != nil {
		return "Could not read the MCP servers: " + err.Error()
	}
	if len(args) == 0 || (len(args) == 1 && args[0] == "status") {
		return v.text()
	}
	if len(args) != 2 {
		return "Unknown /mcp command. " + mcpUsage
	}
	srv, ok := v.find(args[1])
	if !ok {
		return fmt.Sprintf("No MCP server named %q in this session. %s", args[1], mcpUsage)
	}
	var out string
	switch args[0] {
	case "restart":
		_, err = client.RestartMcpServer(ctx, s.a.k, srv.Id)
		out = "Restarting " + srv.Name + "; its status follows as it changes (`/mcp` shows it)."
	case "enable", "disable":
		_, err = client.SetSessionMcpServerEnabled(ctx, s.a.k, s.id, srv.Id, args[0] == "enable")
		out = srv.Name + " is " + args[0] + "d for this session."
	case "login":
		var r *client.LoginMcpServerResponse
		if r, err = client.LoginMcpServer(ctx, s.a.k, srv.Id); err == nil {
			out = "Open " + r.LoginMcpServer + " in a browser to sign in to " + srv.Name + "; it becomes READY when the sign-in completes."
			if s.a.opts.OpenURL != nil && s.a.opts.OpenURL(r.LoginMcpServer) == nil {
				out = "Opened the sign-in page of " + srv.Name + " in a browser (" + r.LoginMcpServer + "); it becomes READY when the sign-in completes."
			}
		}
	case "logout":
		_, err = client.LogoutMcpServer(ctx, s.a.k, srv.Id)
		out = "Signed out of " + srv.Name + "; its tokens are forgotten."
	default:
		return "Unknown /mcp command " + args[0] + ". " + mcpUsage
	}
	if err != nil {
		return fmt.Sprintf("/mcp %s %s: %s", args[0], srv.Name, err.Error())
	}
	return out
}

// sendCommands tells the client the session's slash commands when they
// changed since the last time.
func (s *session) sendCommands(ctx context.Context) {
	v, err := s.a.mcpView(ctx, s.id)
	if err != nil {
		s.a.log.Debug("acp: read the MCP servers for the commands", "session_id", s.id, "err", err)
		return
	}
	s.noteMCP(v)
}

// noteMCP sends the commands when they changed and, to a client that
// presents notices, a notice for each server whose status changed.
func (s *session) noteMCP(v mcpView) {
	cmds := v.commands()
	key, _ := json.Marshal(cmds)
	s.mu.Lock()
	changedCmds := string(key) != s.commandsSent
	s.commandsSent = string(key)
	first := s.mcpSeen == nil
	var changed []client.ACPMcpServerFields
	seen := map[string]string{}
	for _, srv := range v.servers {
		st := v.status(srv)
		seen[srv.Id] = st
		if !first && s.mcpSeen[srv.Id] != st {
			changed = append(changed, srv)
		}
	}
	s.mcpSeen = seen
	s.mu.Unlock()
	if changedCmds {
		s.update(availableCommandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: cmds})
	}
	if !s.a.notices {
		return
	}
	for _, srv := range changed {
		n := noticeUpdate{SessionUpdate: "notice", Severity: "info", Title: "MCP server " + srv.Name + ": " + v.status(srv)}
		switch srv.Status {
		case client.McpStatusFailed:
			n.Severity = "error"
		case client.McpStatusNeedsAuth:
			n.Severity, n.Description = "warning", "Sign in with /mcp login "+srv.Name+" (its tools are not offered until then)."
		}
		if e := deref(srv.Error); e != "" && n.Description == "" {
			n.Description = e
		}
		s.update(n)
	}
}

// watchMCP follows the kernel's MCP status changes for this connection's
// sessions (started with the first session; ends with the connection).
func (a *Agent) watchMCP(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		st, err := client.Subscribe[json.RawMessage](ctx, a.k, client.ACPKernelEvents_Operation, nil)
		if err == nil {
			backoff = 100 * time.Millisecond
			for raw := range st.Events {
				var w client.ACPKernelEventsResponse
				if json.Unmarshal(raw.Raw, &w) != nil || w.KernelEvents.McpServerId == nil {
					continue
				}
				for _, s := range a.openSessions() {
					s.sendCommands(ctx)
				}
			}
			err = st.Err()
		}
		if ctx.Err() != nil {
			return
		}
		a.log.Debug("acp: kernel events ended; following again", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (a *Agent) openSessions() []*session {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		out = append(out, s)
	}
	return out
}
