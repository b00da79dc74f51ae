package mcp

import (
	"net/url"
	"slices"
	"strings"

	"github.com/foya-dev/foya/core"
)

func keysOf(kvs []core.KeyValue) []string {
	out := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, kv.Key)
	}
	return out
}

// redactMCP is the public view of a configured server.
func redactMCP(c core.MCPServerConfig, st core.MCPServerState) core.MCPServer {
	s := core.MCPServer{
		ID: c.ID, Name: c.Name, Transport: c.Transport, Command: c.Command, Args: slices.Clone(c.Args),
		URL: redactMCPURL(c.URL), EnvKeys: keysOf(c.Env), HeaderKeys: keysOf(c.Headers), Enabled: c.Enabled,
		TimeoutSeconds: c.CallTimeoutSeconds(), SessionID: c.SessionID, MCPServerState: st,
		OAuthClientID: c.OAuthClientID, OAuthClientSecretSet: c.OAuthClientSecret != "",
	}
	if s.Args == nil {
		s.Args = []string{}
	}
	if !c.Enabled {
		s.MCPServerState = core.MCPServerState{Status: core.MCPDisabled}
	}
	s.Tools = slices.Clone(s.Tools)
	slices.SortFunc(s.Tools, func(a, b core.MCPToolState) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// redactMCPURL hides credentials and query values of a server URL (some
// hosted servers take their key as a query parameter); names stay.
func redactMCPURL(raw string) string {
	u, err := url.Parse(core.RedactURL(raw))
	if err != nil || u.RawQuery == "" {
		return core.RedactURL(raw)
	}
	q := u.Query()
	for k := range q {
		q[k] = []string{"redacted"}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// mcpHeaderBindingError keeps an HTTP MCP server's headers (secrets: their
// values are never returned) bound to the origin they were given for: an
// update that moves the URL to another scheme, host or port must give
// headers again in the same update ([] for none). Otherwise BAD_INPUT, and
// the server stays as it was.
func mcpHeaderBindingError(before, after core.MCPServerConfig, in core.MCPServerInput) error {
	if in.Headers != nil || len(before.Headers) == 0 || before.Transport != core.MCPHTTP || after.Transport != core.MCPHTTP {
		return nil
	}
	from, to := core.URLOrigin(before.URL), core.URLOrigin(after.URL)
	if from == to {
		return nil
	}
	return core.Errorf(core.CodeBadInput, "input.headers: required when url moves MCP server %q to another origin (%s → %s): its headers are secrets sent only to the server they were given for; give headers again in the same update ([] for none)", before.Name, from, to)
}
