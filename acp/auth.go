package acp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/foya-dev/foya/client"
)

// mcpAuthPrefix starts the id of the auth method that signs in to one MCP
// server needing OAuth (status NEEDS_AUTH): "mcp:<server id>".
const mcpAuthPrefix = "mcp:"

// authWait bounds how long authenticate waits for the person to finish a
// sign-in in the browser (the kernel's pending sign-in lives 10 minutes).
const authWait = 10 * time.Minute

// authenticateRequest is authenticate's params.
type authenticateRequest struct {
	MethodID string `json:"methodId"`
}

// authMethods offers one method per MCP server that needs a sign-in; a
// kernel that cannot be read offers none (the sessions still work, without
// those servers' tools).
func (a *Agent) authMethods(ctx context.Context) []authMethod {
	out := []authMethod{}
	r, err := client.McpServers(ctx, a.k)
	if err != nil {
		a.log.Debug("acp: read the MCP servers for authMethods", "err", err)
		return out
	}
	for _, s := range r.McpServers {
		if s.Status != client.McpStatusNeedsAuth {
			continue
		}
		out = append(out, authMethod{
			ID:          mcpAuthPrefix + s.Id,
			Name:        "Sign in to MCP server " + s.Name,
			Description: "Opens the server's sign-in page in a browser and waits until the sign-in completes (OAuth; the tokens stay in the kernel).",
		})
	}
	return out
}

// authenticate signs in to the MCP server a "mcp:<id>" method names: it asks
// the kernel for the sign-in URL, opens it in a browser (Options.OpenURL)
// and waits until the server is READY. Foya itself needs no sign-in, so any
// other method id is invalid.
func (a *Agent) authenticate(ctx context.Context, p *authenticateRequest) (empty, error) {
	id, ok := strings.CutPrefix(p.MethodID, mcpAuthPrefix)
	if !ok || id == "" {
		return empty{}, invalidParams("authenticate: unknown methodId %q; the methods are those initialize listed (mcp:<server id>)", p.MethodID)
	}
	l, err := client.LoginMcpServer(ctx, a.k, id)
	if err != nil {
		return empty{}, fmt.Errorf("sign in to MCP server %s: %w", id, err)
	}
	url := l.LoginMcpServer
	opened := a.opts.OpenURL != nil && a.opts.OpenURL(url) == nil
	if !opened {
		return empty{}, &rpcError{Code: codeAuthRequired, Message: "open " + url + " in a browser to sign in to the MCP server, then authenticate again"}
	}
	ctx, cancel := context.WithTimeout(ctx, authWait)
	defer cancel()
	for {
		r, err := client.McpServers(ctx, a.k)
		if err == nil {
			for _, s := range r.McpServers {
				if s.Id == id && s.Status == client.McpStatusReady {
					return empty{}, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return empty{}, &rpcError{Code: codeAuthRequired, Message: "the sign-in to the MCP server did not complete; open " + url + " in a browser, or run foya mcp login"}
		case <-time.After(500 * time.Millisecond):
		}
	}
}
