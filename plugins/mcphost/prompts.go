package mcphost

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
)

var _ core.MCPContentRuntime = (*Manager)(nil)

// scoped lists the servers visible in a scope (kernel-wide ones and those
// attached to the scope's sessions, minus those turned off there).
func (m *Manager) scoped(scope []string) []*server {
	in := map[string]bool{"": true}
	off := map[string]bool{}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range scope {
		in[id] = true
		for _, sid := range m.off[id] {
			off[sid] = true
		}
	}
	var out []*server
	for _, s := range m.servers {
		if in[s.cfg.SessionID] && !off[s.cfg.ID] {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *server) int { return strings.Compare(a.cfg.Name, b.cfg.Name) })
	return out
}

// ExpandPrompt implements core.MCPContentRuntime: "/mcp__<server>__<prompt>
// args…" (server and prompt names as in tool names: mcpname.Sanitize) is
// replaced by the text of the prompt's messages. Arguments are given as
// name=value words, or positionally in the prompt's order (the last one
// takes the rest of the line). A missing required argument is BAD_INPUT.
func (m *Manager) ExpandPrompt(ctx context.Context, scope []string, text string) (string, bool, error) {
	head, rest := strings.TrimLeftFunc(text, unicode.IsSpace), ""
	if i := strings.IndexFunc(head, unicode.IsSpace); i >= 0 {
		head, rest = head[:i], head[i:]
	}
	name, ok := strings.CutPrefix(head, "/mcp__")
	if !ok {
		return "", false, nil
	}
	var s *server
	var prompt core.MCPPromptState
	for _, c := range m.scoped(scope) {
		pfx := SanitizeName(c.cfg.Name) + "__"
		if p, ok := strings.CutPrefix(name, pfx); ok {
			for _, pr := range c.snapshot().Prompts {
				if pr.Name == p || SanitizeName(pr.Name) == p {
					s, prompt = c, pr
				}
			}
		}
	}
	if s == nil {
		return "", false, nil
	}
	args, err := promptArgs(prompt, rest)
	if err != nil {
		return "", true, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.m.cfg.ConnectTimeout)
	defer cancel()
	cs, err := s.ready(cctx)
	if err != nil {
		return "", true, core.Errorf(core.CodeUnavailable, "MCP server %q is not available: %s", s.cfg.Name, s.scrub(err.Error()))
	}
	res, err := cs.GetPrompt(cctx, &mcp.GetPromptParams{Name: prompt.Name, Arguments: args})
	if err != nil {
		return "", true, core.Errorf(core.CodeProviderError, "MCP server %q: prompt %s: %s", s.cfg.Name, prompt.Name, s.scrub(err.Error()))
	}
	var parts []string
	for _, msg := range res.Messages {
		switch c := msg.Content.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, resourceBlock(s.cfg.Name, c.Resource.URI, c.Resource.MIMEType, c.Resource.Text))
			}
		}
	}
	out := strings.Join(parts, "\n\n")
	if len(out) > core.MaxMCPContextBytes {
		return "", true, core.Errorf(core.CodeBadInput, "MCP server %q: prompt %s expands to %d bytes, over %d", s.cfg.Name, prompt.Name, len(out), core.MaxMCPContextBytes)
	}
	return out, true, nil
}

// promptArgs maps the words after the prompt name to its arguments.
func promptArgs(p core.MCPPromptState, rest string) (map[string]string, error) {
	args := map[string]string{}
	var positional []string
	for _, w := range strings.Fields(rest) {
		if k, v, ok := strings.Cut(w, "="); ok && slices.ContainsFunc(p.Arguments, func(a core.MCPPromptArgument) bool { return a.Name == k }) {
			args[k] = v
			continue
		}
		positional = append(positional, w)
	}
	var free []string
	for _, a := range p.Arguments {
		if _, set := args[a.Name]; !set {
			free = append(free, a.Name)
		}
	}
	for i, w := range positional {
		if len(free) == 0 {
			return nil, core.Errorf(core.CodeBadInput, "prompt %s takes no more arguments (extra: %q)", p.Name, core.Clip(strings.Join(positional[i:], " "), 80))
		}
		if len(free) == 1 {
			args[free[0]] = strings.Join(positional[i:], " ")
			break
		}
		args[free[0]], free = w, free[1:]
	}
	var missing []string
	for _, a := range p.Arguments {
		if _, set := args[a.Name]; a.Required && !set {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, core.Errorf(core.CodeBadInput, "prompt %s needs %s (give them after the name, in order or as name=value)", p.Name, strings.Join(missing, ", "))
	}
	return args, nil
}

// ReadResource implements core.MCPContentRuntime.
func (m *Manager) ReadResource(ctx context.Context, scope []string, serverID, uri string) ([]core.MCPResourceContent, error) {
	i := slices.IndexFunc(m.scoped(scope), func(s *server) bool { return s.cfg.ID == serverID })
	if i < 0 {
		return nil, core.Errorf(core.CodeNotFound, "MCP server %s is not available in this session", serverID)
	}
	s := m.scoped(scope)[i]
	cctx, cancel := context.WithTimeout(ctx, s.m.cfg.ConnectTimeout)
	defer cancel()
	cs, err := s.ready(cctx)
	if err != nil {
		return nil, core.Errorf(core.CodeUnavailable, "MCP server %q is not available: %s", s.cfg.Name, s.scrub(err.Error()))
	}
	res, err := cs.ReadResource(cctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, core.Errorf(core.CodeProviderError, "MCP server %q: read %s: %s", s.cfg.Name, core.Clip(uri, 200), s.scrub(err.Error()))
	}
	out := make([]core.MCPResourceContent, 0, len(res.Contents))
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		out = append(out, core.MCPResourceContent{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text, Blob: c.Blob})
	}
	return out, nil
}

// resourceBlock is how a resource reaches the model: its server, URI and
// MIME type around its text.
func resourceBlock(server, uri, mime, text string) string {
	if mime == "" {
		mime = "text/plain"
	}
	return fmt.Sprintf("<mcp-resource server=%q uri=%q mimeType=%q>\n%s\n</mcp-resource>", server, uri, mime, text)
}
