package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/foya-dev/foya/core"
)

// ToolWebSearch searches the web with the provider's native search (PRV-7,
// PRV-8). It is offered when the bound model declares webSearch: true and its
// provider declares the web_search capability, or else when the user
// configured a fallback search connection (OptionWebSearchFallback); without
// either the model does not see it.
const ToolWebSearch = "web_search"

// OptionWebSearchFallback = "true" on a language connection makes it the
// search service of sessions whose own model cannot search: its provider
// must declare web_search (the built-in openai provider with option
// web_search=responses, or a search plugin), and its first model that
// declares webSearch: true (else its first model) answers the query. The
// first such connection by order is used.
const OptionWebSearchFallback = "web_search_fallback"

var webSearchToolInfo = core.ToolInfo{Name: ToolWebSearch, ReadOnly: true,
	Description: "Search the web and get a short answer with its sources. Use it for facts newer than your training or outside the project.",
	Schema:      json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`)}

// webSearchAvailable reports whether the session's model can search natively.
func webSearchAvailable(b boundModel) bool {
	_, ok := b.provider.(core.WebSearcher)
	return ok && b.model.Capabilities.WebSearch != nil && *b.model.Capabilities.WebSearch && core.HasCapability(b.provider, core.CapWebSearch)
}

func runWebSearch(ctx context.Context, e *Engine, s core.Session, c core.ToolCall) (string, bool) {
	var in struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil || strings.TrimSpace(in.Query) == "" {
		return "web_search: give a non-empty \"query\"", true
	}
	pctx := context.WithoutCancel(ctx)
	b, err := e.models.resolve(pctx, s)
	if err != nil {
		return core.ErrorMessage(err), true
	}
	native := webSearchAvailable(b)
	if !native {
		// No native search on this route: the fallback search directly.
		fb, ok := e.models.searchFallback(pctx)
		if !ok {
			return "web_search is not available: the model does not declare webSearch, its provider cannot search, and no fallback search connection is configured", true
		}
		b = fb
	}
	search := func(b boundModel) (core.WebSearchResult, error) {
		return b.provider.(core.WebSearcher).WebSearch(ctx, b.endpoint, core.WebSearchRequest{Model: b.model.ID, Query: in.Query})
	}
	res, err := search(b)
	if err != nil && native && searchUnavailable(err) {
		// The model declares native search but its route answers, at run
		// time, that it has none: the configured fallback, in the same call.
		nativeErr := core.ScrubSecret(core.ErrorMessage(err), b.endpoint.APIKey)
		fb, ok := e.models.searchFallback(pctx)
		if !ok || fb.route == b.route {
			return "web_search failed: the native search is unavailable (" + nativeErr + ") and no fallback search connection is configured", true
		}
		e.log.Info("native web search unavailable; using the fallback search", "session_id", s.ID, "model", b.model.ID, "fallback", fb.model.ID, "err", nativeErr)
		b = fb
		if res, err = search(b); err != nil {
			return "web_search failed: the native search is unavailable (" + nativeErr + "), and the fallback search failed: " + core.ScrubSecret(core.ErrorMessage(err), b.endpoint.APIKey), true
		}
	}
	if err != nil {
		return "web_search failed: " + core.ScrubSecret(core.ErrorMessage(err), b.endpoint.APIKey), true
	}
	if res.Usage != nil {
		e.rec.recordUsage(pctx, s.ID, b, core.ProviderRequest{Model: b.model.ID}, streamResult{text: res.Text, usage: res.Usage}, "web_search")
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

// searchUnavailable reports whether a native search failed because the
// route has no search (the provider says unavailable, or the endpoint has
// no such route: 404, 405, 501), as opposed to a failed search.
func searchUnavailable(err error) bool {
	if errors.Is(err, core.ErrUnavailable) {
		return true
	}
	var perr *core.ProviderError
	if !errors.As(err, &perr) {
		return false
	}
	return perr.Category == core.ProviderUnavailable || perr.StatusCode == 404 || perr.StatusCode == 405 || perr.StatusCode == 501
}

// searchFallback finds the configured fallback search connection and model.
func (m *models) searchFallback(ctx context.Context) (boundModel, bool) {
	conns, err := m.catalog.Connections(ctx)
	if err != nil {
		return boundModel{}, false
	}
	for _, c := range conns {
		if c.Type != core.ConnLanguage || c.Options[OptionWebSearchFallback] != "true" || len(c.Models) == 0 {
			continue
		}
		model := c.Models[0]
		for _, cm := range c.Models {
			if cm.Capabilities.WebSearch != nil && *cm.Capabilities.WebSearch {
				model = cm
				break
			}
		}
		p, err := m.providers.Provider(c.ProviderKind)
		if err != nil {
			continue
		}
		if _, ok := p.(core.WebSearcher); !ok || !core.HasCapability(p, core.CapWebSearch) {
			continue
		}
		ep, err := m.catalog.Endpoint(ctx, c.ID)
		if err != nil {
			continue
		}
		return boundModel{conn: c, model: model, endpoint: ep, provider: p, route: core.RouteKey(c, model.ID)}, true
	}
	return boundModel{}, false
}
