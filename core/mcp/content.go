package mcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/foya-dev/foya/core"
)

// MaxMessageResources bounds the resources attached to one message.
const MaxMessageResources = 10

// ExpandPrompt expands a message that starts with /mcp__<server>__<prompt>
// by that server's prompt (scope: the session, then its ancestors); a text
// that names no prompt comes back unchanged.
func (s *Service) ExpandPrompt(ctx context.Context, scope []string, text string) (string, error) {
	if s.content == nil || !strings.HasPrefix(strings.TrimSpace(text), "/mcp__") {
		return text, nil
	}
	out, ok, err := s.content.ExpandPrompt(ctx, scope, text)
	if err != nil || !ok {
		return text, err
	}
	return out, nil
}

// ResourceContext reads the resources attached to a message and returns
// them as text for the model: one block per content with its server, URI
// and MIME type (binary contents base64-encoded), within
// core.MaxMCPContextBytes.
func (s *Service) ResourceContext(ctx context.Context, scope []string, refs []core.MCPResourceRef) (string, error) {
	if len(refs) == 0 {
		return "", nil
	}
	if s.content == nil {
		return "", core.Errorf(core.CodeUnavailable, "this kernel cannot read MCP resources")
	}
	if len(refs) > MaxMessageResources {
		return "", core.Errorf(core.CodeBadInput, "input.resources: %d resources, at most %d per message", len(refs), MaxMessageResources)
	}
	var b strings.Builder
	for i, r := range refs {
		if r.ServerID == "" || r.URI == "" {
			return "", core.Errorf(core.CodeBadInput, "input.resources[%d]: serverId and uri are required", i)
		}
		srv, err := s.Server(ctx, r.ServerID)
		if err != nil {
			return "", err
		}
		contents, err := s.content.ReadResource(ctx, scope, r.ServerID, r.URI)
		if err != nil {
			return "", err
		}
		for _, c := range contents {
			mime, body := c.MIMEType, c.Text
			if mime == "" {
				mime = "text/plain"
			}
			enc := ""
			if c.Blob != nil {
				body, enc = base64.StdEncoding.EncodeToString(c.Blob), ` encoding="base64"`
			}
			fmt.Fprintf(&b, "\n\n<mcp-resource server=%q uri=%q mimeType=%q%s>\n%s\n</mcp-resource>", srv.Name, c.URI, mime, enc, body)
			if b.Len() > core.MaxMCPContextBytes {
				return "", core.Errorf(core.CodeBadInput, "input.resources: over %d bytes of resource content for one message", core.MaxMCPContextBytes)
			}
		}
	}
	return b.String(), nil
}
