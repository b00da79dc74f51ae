package mcp

import (
	"github.com/foya-dev/foya/core"
	"net/url"
	"slices"
	"strings"
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
