package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
)

// WebSearchTool is the server tool a web search asks Claude to use
// (Anthropic runs the searches; the answer cites the pages).
const WebSearchTool = "web_search_20250305"

const (
	// webSearchMaxUses bounds the searches of one query.
	webSearchMaxUses = 5
	// webSearchMaxTokens bounds the answer.
	webSearchMaxTokens = 4096
	// maxSources bounds the sources returned.
	maxSources = 20
)

// webSearchBlock is a content block of a web search answer, as far as it
// is read: text (with its citations), and the search results with their
// pages, or an error.
type webSearchBlock struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Citations []struct {
		Type  string `json:"type"`
		URL   string `json:"url"`
		Title string `json:"title"`
	} `json:"citations"`
	// Content is a web_search_tool_result's: a list of results, or an
	// error object.
	Content json.RawMessage `json:"content"`
}

// WebSearch answers a query with Claude's web search server tool in one
// non-streaming Messages call: the answer is its text, the sources are the
// pages it cites (else the pages it found), in order of first citation.
// When every search failed and nothing was answered, the service's error
// code decides the category: "unavailable" lets the kernel use the
// configured fallback search. A turn the service pauses (stop reason
// pause_turn, a long run of searches) is sent back as it is to go on, at
// most webSearchMaxPauses times; the answer is then all its parts'.
func (p *Provider) WebSearch(ctx context.Context, ep sdk.Endpoint, req sdk.WebSearchRequest) (sdk.WebSearchResult, error) {
	messages := []map[string]any{{"role": "user", "content": req.Query}}
	var content []json.RawMessage
	var usage sdk.Usage
	for round := 0; ; round++ {
		body := map[string]any{
			"model":      req.Model,
			"max_tokens": webSearchMaxTokens,
			"messages":   messages,
			"tools":      []map[string]any{{"type": WebSearchTool, "name": "web_search", "max_uses": webSearchMaxUses}},
		}
		resp, err := p.do(ctx, ep, http.MethodPost, "/v1/messages", body)
		if err != nil {
			return sdk.WebSearchResult{}, err
		}
		a, err := decodeWebSearch(resp.Body)
		resp.Body.Close()
		if err != nil {
			if ctx.Err() != nil {
				return sdk.WebSearchResult{}, ctx.Err()
			}
			return sdk.WebSearchResult{}, err
		}
		content = append(content, a.Content...)
		u := a.Usage.sdk(a.Model)
		usage.Model = u.Model
		usage.InputTokens += u.InputTokens
		usage.OutputTokens += u.OutputTokens
		usage.TotalTokens += u.TotalTokens
		usage.CachedTokens += u.CachedTokens
		usage.CacheWriteTokens += u.CacheWriteTokens
		if a.StopReason != "pause_turn" || round == webSearchMaxPauses {
			break
		}
		// A long turn of server tools paused: sent back as it is, the
		// turn goes on where it stopped.
		if last := messages[len(messages)-1]; last["role"] == "assistant" {
			last["content"] = content
		} else {
			messages = append(messages, map[string]any{"role": "assistant", "content": content})
		}
	}
	return summarizeWebSearch(content, &usage)
}

// webSearchMaxPauses bounds how often a paused search turn (stop reason
// pause_turn) is continued.
const webSearchMaxPauses = 3

// webSearchAnswer is one Messages response to a web search.
type webSearchAnswer struct {
	Model      string            `json:"model"`
	StopReason string            `json:"stop_reason"`
	Content    []json.RawMessage `json:"content"`
	Usage      wireUsage         `json:"usage"`
}

// decodeWebSearch reads one answer (a Messages response body, at most
// 32 MiB of it).
func decodeWebSearch(body io.Reader) (webSearchAnswer, error) {
	var a webSearchAnswer
	if err := json.NewDecoder(io.LimitReader(body, 32<<20)).Decode(&a); err != nil {
		return a, &sdk.Error{Category: sdk.CategoryBadResponse, Message: "decode web search answer: " + err.Error()}
	}
	return a, nil
}

// parseWebSearch reads a web search answer: its text, its sources and its
// usage, or a classified error.
func parseWebSearch(body io.Reader) (sdk.WebSearchResult, error) {
	a, err := decodeWebSearch(body)
	if err != nil {
		return sdk.WebSearchResult{}, err
	}
	u := a.Usage.sdk(a.Model)
	return summarizeWebSearch(a.Content, &u)
}

// summarizeWebSearch is the result of an answer's content blocks (of all
// its responses, when it paused).
func summarizeWebSearch(content []json.RawMessage, usage *sdk.Usage) (sdk.WebSearchResult, error) {
	var text strings.Builder
	var cited, found []sdk.WebSource
	var errCode string
	for _, raw := range content {
		var b webSearchBlock
		if json.Unmarshal(raw, &b) != nil {
			continue // a block of another shape: neither text nor results
		}
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
			for _, c := range b.Citations {
				if c.URL != "" {
					cited = append(cited, sdk.WebSource{Title: c.Title, URL: c.URL})
				}
			}
		case "web_search_tool_result":
			var results []struct {
				Type  string `json:"type"`
				URL   string `json:"url"`
				Title string `json:"title"`
			}
			var failure struct {
				ErrorCode string `json:"error_code"`
			}
			switch {
			case json.Unmarshal(b.Content, &results) == nil:
				for _, res := range results {
					if res.Type == "web_search_result" && res.URL != "" {
						found = append(found, sdk.WebSource{Title: res.Title, URL: res.URL})
					}
				}
			case json.Unmarshal(b.Content, &failure) == nil && failure.ErrorCode != "":
				errCode = failure.ErrorCode
			}
		}
	}
	answer := strings.TrimSpace(text.String())
	if answer == "" {
		if errCode != "" {
			return sdk.WebSearchResult{}, &sdk.Error{Category: searchErrorCategory(errCode), Message: "web search failed: " + errCode}
		}
		return sdk.WebSearchResult{}, &sdk.Error{Category: sdk.CategoryBadResponse, Message: "the web search answered nothing"}
	}
	sources := cited
	if len(sources) == 0 {
		sources = found
	}
	return sdk.WebSearchResult{Text: answer, Sources: uniqueSources(sources), Usage: usage}, nil
}

// searchErrorCategory classifies a web_search_tool_result_error code.
func searchErrorCategory(code string) sdk.ErrorCategory {
	switch code {
	case "unavailable":
		return sdk.CategoryUnavailable
	case "too_many_requests":
		return sdk.CategoryRateLimit
	case "invalid_input", "query_too_long", "max_uses_exceeded":
		return sdk.CategoryBadRequest
	}
	return sdk.CategoryServer
}

// uniqueSources keeps each URL once, in order, at most maxSources.
func uniqueSources(in []sdk.WebSource) []sdk.WebSource {
	seen := map[string]bool{}
	var out []sdk.WebSource
	for _, s := range in {
		if seen[s.URL] || len(out) == maxSources {
			continue
		}
		seen[s.URL] = true
		out = append(out, s)
	}
	return out
}
