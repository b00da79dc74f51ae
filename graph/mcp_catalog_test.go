package graph_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// McpServer.prompts, resources and resourceTemplates list what the server
// offers, and follow its list_changed notifications.
func TestMCPPromptsAndResourcesListed(t *testing.T) {
	k := newMCPKernel(t)
	server := mcp.NewServer(&mcp.Implementation{Name: "cat", Version: "1"}, nil)
	noPrompt := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}
	server.AddPrompt(&mcp.Prompt{Name: "review", Title: "Review", Description: "Review a file", Arguments: []*mcp.PromptArgument{{Name: "path", Description: "the file", Required: true}, {Name: "tone"}}}, noPrompt)
	server.AddResource(&mcp.Resource{URI: "test://readme", Name: "readme", Description: "The README", MIMEType: "text/markdown"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://files/{path}", Name: "files", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(func() {
		k.host.Close()
		hs.CloseClientConnections()
		hs.Close()
	})
	srv := k.createMCP(t, map[string]any{"name": "cat", "transport": "HTTP", "url": hs.URL})
	k.waitStatus(t, srv.ID, "READY")

	type catalogJSON struct {
		Prompts []struct {
			Name, Title, Description string
			Arguments                []struct {
				Name, Description string
				Required          bool
			}
		}
		Resources         []struct{ URI, Name, Title, Description, MimeType string }
		ResourceTemplates []struct{ URITemplate, Name, MimeType string }
	}
	list := func() catalogJSON {
		t.Helper()
		var out struct{ McpServers []catalogJSON }
		k.mustDo(t, `{ mcpServers { prompts { name title description arguments { name description required } } resources { uri name title description mimeType } resourceTemplates { uriTemplate name mimeType } } }`, nil, &out)
		if len(out.McpServers) != 1 {
			t.Fatalf("servers %+v", out.McpServers)
		}
		return out.McpServers[0]
	}
	c := list()
	if len(c.Prompts) != 1 || c.Prompts[0].Name != "review" || c.Prompts[0].Title != "Review" || len(c.Prompts[0].Arguments) != 2 ||
		!c.Prompts[0].Arguments[0].Required || c.Prompts[0].Arguments[1].Required {
		t.Fatalf("prompts %+v", c.Prompts)
	}
	if len(c.Resources) != 1 || c.Resources[0].URI != "test://readme" || c.Resources[0].MimeType != "text/markdown" || c.Resources[0].Description != "The README" {
		t.Fatalf("resources %+v", c.Resources)
	}
	if len(c.ResourceTemplates) != 1 || c.ResourceTemplates[0].URITemplate != "test://files/{path}" || c.ResourceTemplates[0].MimeType != "text/plain" {
		t.Fatalf("templates %+v", c.ResourceTemplates)
	}

	// list_changed: a prompt and a resource added while connected appear.
	server.AddPrompt(&mcp.Prompt{Name: "summarize"}, noPrompt)
	server.AddResource(&mcp.Resource{URI: "test://changelog", Name: "changelog"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	k.waitMCP(t, srv.ID, "listed the new prompt and resource", func(mcpServerJSON) bool {
		c := list()
		return slices.ContainsFunc(c.Prompts, func(p struct {
			Name, Title, Description string
			Arguments                []struct {
				Name, Description string
				Required          bool
			}
		}) bool {
			return p.Name == "summarize"
		}) && len(c.Resources) == 2
	})
}
