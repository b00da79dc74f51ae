package mcphost

import (
	"fmt"
	"slices"
	"strings"

	"github.com/foya-dev/foya/internal/mcpname"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxToolName is the longest tool name offered to a model (the OpenAI
// function name limit).
const MaxToolName = mcpname.Max

type toolTarget struct {
	serverID string
	tool     string
}

type serverTools struct {
	id, name string
	tools    []*mcp.Tool
}

type exposedTool struct {
	toolTarget
	exposed string
	def     *mcp.Tool
}

// SanitizeName replaces every character outside [A-Za-z0-9_-] with '_',
// as the kernel does with the server and tool parts of an exposed tool
// name (mcpname.Sanitize).
func SanitizeName(s string) string { return mcpname.Sanitize(s) }

// exposedName is mcp__<server>__<tool> (mcpname.Exposed).
func exposedName(server, tool string) string { return mcpname.Exposed(server, tool) }

// exposeNames names every tool of lists (servers in a deterministic order,
// tools sorted by name within a server). A name already taken gets the
// suffix _2, _3… (the first holder keeps the plain name). It returns the
// names and a description of each collision.
func exposeNames(lists []serverTools) ([]exposedTool, []string) {
	taken := map[string]string{}
	var out []exposedTool
	var clashes []string
	for _, l := range lists {
		tools := slices.Clone(l.tools)
		slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
		for _, t := range tools {
			name := exposedName(l.name, t.Name)
			if first, dup := taken[name]; dup {
				base := name
				for i := 2; ; i++ {
					suffix := fmt.Sprintf("_%d", i)
					name = base[:min(len(base), MaxToolName-len(suffix))] + suffix
					if _, dup := taken[name]; !dup {
						break
					}
				}
				clashes = append(clashes, fmt.Sprintf("%s/%s is %s (%s keeps %s)", l.name, t.Name, name, first, base))
			}
			taken[name] = l.name + "/" + t.Name
			out = append(out, exposedTool{toolTarget: toolTarget{serverID: l.id, tool: t.Name}, exposed: name, def: t})
		}
	}
	return out, clashes
}
