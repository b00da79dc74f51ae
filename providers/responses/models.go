package responses

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/foya-dev/foya/plugins/sdk"
)

// ListModels asks GET /models. The endpoint reports no capabilities, so
// they stay unknown (declare them on the connection's models).
func (p *Provider) ListModels(ctx context.Context, ep sdk.Endpoint) ([]sdk.Model, error) {
	resp, err := p.do(ctx, ep, http.MethodGet, "/models", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&r); err != nil {
		return nil, &sdk.Error{Category: sdk.CategoryServer, Message: "decode model list: " + err.Error()}
	}
	out := make([]sdk.Model, 0, len(r.Data))
	for _, m := range r.Data {
		out = append(out, sdk.Model{ID: m.ID})
	}
	return out, nil
}

// WebSearch answers a query with the native web_search tool of the
// Responses API (one non-streaming, stateless request).
func (p *Provider) WebSearch(ctx context.Context, ep sdk.Endpoint, req sdk.WebSearchRequest) (sdk.WebSearchResult, error) {
	body := map[string]any{
		"model": req.Model, "store": false,
		"tools": []map[string]string{{"type": "web_search"}},
		"input": req.Query,
	}
	resp, err := p.do(ctx, ep, http.MethodPost, "/responses", body)
	if err != nil {
		return sdk.WebSearchResult{}, err
	}
	defer resp.Body.Close()
	var r response
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&r); err != nil {
		return sdk.WebSearchResult{}, &sdk.Error{Category: sdk.CategoryServer, Message: "decode web search: " + err.Error()}
	}
	if r.Status == "failed" && r.Error != nil {
		return sdk.WebSearchResult{}, classifyObject(0, nil, r.Error)
	}
	text, sources := r.text()
	u := r.Usage.sdk(r.Model)
	return sdk.WebSearchResult{Text: text, Sources: sources, Usage: &u}, nil
}
