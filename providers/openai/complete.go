package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/foya-dev/foya/plugins/sdk"
)

// Complete runs a non-streaming Chat Completions request (titles, memory).
func (p *Provider) Complete(ctx context.Context, ep sdk.Endpoint, req sdk.Request) (sdk.Completion, error) {
	return p.CompleteDetailed(ctx, ep, req)
}

// CompleteDetailed is Complete with finish reason and usage (compaction). A
// "length" finish reason is returned as such, not as an error: the caller
// decides whether a truncated summary is usable.
func (p *Provider) CompleteDetailed(ctx context.Context, ep sdk.Endpoint, req sdk.Request) (sdk.Completion, error) {
	resp, err := p.do(ctx, ep, http.MethodPost, "/chat/completions", buildChatRequest(ep, req, false))
	if err != nil {
		return sdk.Completion{}, err
	}
	defer resp.Body.Close()
	var body chatChunk
	// Bounded like the other providers' completions: a hostile endpoint's
	// endless body fails to decode instead of growing the plugin.
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&body); err != nil {
		if ctx.Err() != nil {
			return sdk.Completion{}, ctx.Err()
		}
		return sdk.Completion{}, networkError("read completion", err)
	}
	if body.Error != nil {
		raw, _ := json.Marshal(map[string]*apiError{"error": body.Error})
		return sdk.Completion{}, classify(0, nil, raw)
	}
	var out sdk.Completion
	if len(body.Choices) > 0 {
		ch := body.Choices[0]
		if ch.Message != nil {
			out.Text = ch.Message.text()
		}
		if ch.FinishReason != nil {
			out.FinishReason = *ch.FinishReason
		}
	}
	if body.Usage != nil {
		u := body.Usage.toSDK(body.Model)
		out.Usage = &u
	}
	return out, nil
}

// maxListBytes bounds a model list or model object the provider reads.
const maxListBytes = 8 << 20

// ListModels reads GET {baseURL}/models. Model lists rarely report
// capabilities, so they stay unknown.
func (p *Provider) ListModels(ctx context.Context, ep sdk.Endpoint) ([]sdk.Model, error) {
	resp, err := p.do(ctx, ep, http.MethodGet, "/models", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Data []modelObject `json:"data"`
	}
	// Bounded like the other providers' lists: an endless body fails to
	// decode instead of growing the plugin.
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxListBytes)).Decode(&body); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &sdk.Error{Category: sdk.CategoryServer, Message: "decode model list: " + err.Error()}
	}
	models := make([]sdk.Model, 0, len(body.Data))
	for _, m := range body.Data {
		models = append(models, sdk.Model{ID: m.ID, Capabilities: m.capabilities()})
	}
	return models, nil
}

// WebSearch asks the Responses API with its web_search tool. It is
// available only on connections whose web_search option is "responses";
// otherwise callers fall back to a configured external search (PRV-8).
func (p *Provider) WebSearch(ctx context.Context, ep sdk.Endpoint, req sdk.WebSearchRequest) (sdk.WebSearchResult, error) {
	if ep.Options[OptionWebSearch] != "responses" {
		return sdk.WebSearchResult{}, sdk.Errorf(sdk.CategoryUnavailable,
			"connection %s does not enable native web search (set option %s=responses)", ep.ConnectionID, OptionWebSearch)
	}
	body := map[string]any{
		"model": req.Model,
		"input": req.Query,
		"tools": []map[string]string{{"type": "web_search"}},
	}
	resp, err := p.do(ctx, ep, http.MethodPost, "/responses", body)
	if err != nil {
		return sdk.WebSearchResult{}, err
	}
	defer resp.Body.Close()
	var r struct {
		Model  string `json:"model"`
		Output []struct {
			Type    string `json:"type"`
			Content []struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				Annotations []struct {
					Type  string `json:"type"`
					URL   string `json:"url"`
					Title string `json:"title"`
				} `json:"annotations"`
			} `json:"content"`
		} `json:"output"`
		Usage *struct {
			InputTokens        int64 `json:"input_tokens"`
			OutputTokens       int64 `json:"output_tokens"`
			TotalTokens        int64 `json:"total_tokens"`
			InputTokensDetails *struct {
				CachedTokens int64 `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&r); err != nil {
		if ctx.Err() != nil {
			return sdk.WebSearchResult{}, ctx.Err()
		}
		return sdk.WebSearchResult{}, &sdk.Error{Category: sdk.CategoryServer, Message: "decode responses answer: " + err.Error()}
	}
	var out sdk.WebSearchResult
	for _, item := range r.Output {
		if item.Type != "message" {
			continue
		}
		for _, c := range item.Content {
			if c.Type != "output_text" {
				continue
			}
			out.Text += c.Text
			for _, a := range c.Annotations {
				if a.Type == "url_citation" {
					out.Sources = append(out.Sources, sdk.WebSource{Title: a.Title, URL: a.URL})
				}
			}
		}
	}
	if u := r.Usage; u != nil {
		out.Usage = &sdk.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens, Model: r.Model}
		if u.InputTokensDetails != nil {
			out.Usage.CachedTokens = u.InputTokensDetails.CachedTokens
		}
	}
	return out, nil
}
