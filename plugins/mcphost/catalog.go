package mcphost

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
)

// serverCatalog is what a server lists besides its tools.
type serverCatalog struct {
	prompts   []core.MCPPromptState
	resources []core.MCPResourceState
	templates []core.MCPResourceTemplateState
}

// listCatalog lists the prompts, resources and resource templates of the
// server, for the capabilities it declared.
func listCatalog(ctx context.Context, cs *mcp.ClientSession) (serverCatalog, error) {
	var out serverCatalog
	caps := &mcp.ServerCapabilities{}
	if r := cs.InitializeResult(); r != nil && r.Capabilities != nil {
		caps = r.Capabilities
	}
	if caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return out, fmt.Errorf("list prompts: %w", err)
			}
			ps := core.MCPPromptState{Name: p.Name, Title: p.Title, Description: p.Description}
			for _, a := range p.Arguments {
				if a != nil {
					ps.Arguments = append(ps.Arguments, core.MCPPromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
				}
			}
			out.prompts = append(out.prompts, ps)
		}
	}
	if caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return out, fmt.Errorf("list resources: %w", err)
			}
			out.resources = append(out.resources, core.MCPResourceState{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return out, fmt.Errorf("list resource templates: %w", err)
			}
			out.templates = append(out.templates, core.MCPResourceTemplateState{URITemplate: r.URITemplate, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
		}
	}
	return out, nil
}

// apply puts the catalog into a server state.
func (c serverCatalog) apply(st *core.MCPServerState) {
	st.Prompts, st.Resources, st.ResourceTemplates = c.prompts, c.resources, c.templates
}
