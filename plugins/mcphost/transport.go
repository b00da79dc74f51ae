package mcphost

import (
	"bytes"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/internal/lines"
)

// baseEnvKeys are the variables of the kernel's environment a STDIO server
// inherits: what finding and running programs needs (npx, uvx), locale and
// proxies; nothing else (no API keys). The server's configured env is
// added on top.
var baseEnvKeys = []string{
	"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "LANG", "LC_ALL", "TZ",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "npm_config_cache",
}

func serverEnv(c core.MCPServerConfig) []string {
	var env []string
	for _, k := range baseEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if _, ok := os.LookupEnv("PATH"); !ok {
		env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	for _, kv := range c.Env {
		env = append(env, kv.Key+"="+kv.Value)
	}
	return env
}

// stdioTransport builds the child process of a STDIO server: minimal
// environment, its own process group, killed when the kernel dies, stderr
// re-logged line by line with the server's name.
func stdioTransport(c core.MCPServerConfig, log *slog.Logger) (*mcp.CommandTransport, *exec.Cmd) {
	cmd := exec.Command(c.Command, c.Args...)
	cmd.Env = serverEnv(c)
	cmd.Stderr = lines.NewWriter((&lineLogger{log: log}).emit)
	childSysProcAttr(cmd)
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, cmd
}

// httpTransport speaks Streamable HTTP to the server's URL with its headers.
func httpTransport(c core.MCPServerConfig) *mcp.StreamableClientTransport {
	h := http.Header{}
	for _, kv := range c.Headers {
		h.Set(kv.Key, kv.Value)
	}
	return &mcp.StreamableClientTransport{
		Endpoint:   c.URL,
		HTTPClient: &http.Client{Transport: &headerTransport{base: http.DefaultTransport, headers: h}},
	}
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
