package mcphost

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/internal/lines"
)

// stdioTransport builds the transport of a STDIO server: its process
// (confined when the sandbox is usable, see stdioCommand) in its own
// process group, killed when the kernel dies, stderr re-logged line by line
// with the server's name.
func (m *Manager) stdioTransport(ctx context.Context, c core.MCPServerConfig, log *slog.Logger) (*mcp.CommandTransport, *exec.Cmd, error) {
	cmd, err := m.stdioCommand(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = lines.NewWriter((&lineLogger{log: log}).emit)
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, cmd, nil
}

// httpTransport speaks Streamable HTTP to the server's URL with its headers.
// With oauth (nil: none), the access token goes in Authorization and a
// 401 starts the OAuth flow (oauth.go).
func httpTransport(c core.MCPServerConfig, oauth *oauthHandler) *mcp.StreamableClientTransport {
	h := http.Header{}
	for _, kv := range c.Headers {
		h.Set(kv.Key, kv.Value)
	}
	t := &mcp.StreamableClientTransport{
		Endpoint:   c.URL,
		HTTPClient: &http.Client{Transport: &headerTransport{base: http.DefaultTransport, headers: h}},
	}
	if oauth != nil {
		t.OAuthHandler = oauth
	}
	return t
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// lineLogger re-emits a server's stderr, one log record per line.
type lineLogger struct {
	log *slog.Logger
}

func (w *lineLogger) emit(line []byte) {
	if line = bytes.TrimSpace(line); len(line) > 0 {
		w.log.Info("mcp server stderr", "line", string(line))
	}
}
