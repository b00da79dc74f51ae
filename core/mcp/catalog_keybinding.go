package mcp

import (
	"github.com/foya-dev/foya/core"
)

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
