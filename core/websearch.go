package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// ToolWebSearch searches the web with the provider's native search (PRV-7,
// PRV-8). It is offered only when the bound model declares webSearch: true
// and its provider declares the web_search capability; there is no
// external fallback configured today, so otherwise the model does not see it.
const ToolWebSearch = "web_search"

var webSearchToolInfo = ToolInfo{Name: ToolWebSearch, ReadOnly: true,
	Description: "Search the web and get a short answer with its sources. Use it for facts newer than your training or outside the project.",
	Schema:      json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`)}

// webSearchAvailable reports whether the session's model can search natively.
func webSearchAvailable(b boundModel) bool {
	_, ok := b.provider.(WebSearcher)
	return ok && b.model.Capabilities.WebSearch != nil && *b.model.Capabilities.WebSearch && HasCapability(b.provider, CapWebSearch)
}

func runWebSearch(ctx context.Context, e *Engine, s Session, c ToolCall) (string, bool) {
	var in struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil || strings.TrimSpace(in.Query) == "" {
		return "web_search: give a non-empty \"query\"", true
	}
	pctx := context.WithoutCancel(ctx)
	b, err := e.resolveModel(pctx, s)
	if err != nil {
		return ErrorMessage(err), true
	}
	if !webSearchAvailable(b) {
		return "web_search is not available: the model does not declare webSearch or its provider cannot search", true
	}
	res, err := b.provider.(WebSearcher).WebSearch(ctx, b.endpoint, WebSearchRequest{Model: b.model.ID, Query: in.Query})
	if err != nil {
		return "web_search failed: " + scrubSecret(ErrorMessage(err), b.endpoint.APIKey), true
	}
	if res.Usage != nil {
		e.recordUsage(pctx, s.ID, b, ProviderRequest{Model: b.model.ID}, streamResult{text: res.Text, usage: res.Usage}, "web_search")
	}
	var out strings.Builder
	out.WriteString(res.Text)
	if len(res.Sources) > 0 {
		out.WriteString("\n\nSources:")
		for _, src := range res.Sources {
			fmt.Fprintf(&out, "\n- %s: %s", src.Title, src.URL)
		}
	}
	return out.String(), false
}
