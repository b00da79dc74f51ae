package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/anthropic"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// A recorded answer of the real API (claude-sonnet-4 with the web_search
// server tool; testdata/recorded/SOURCES): the text of every text block,
// the cited pages once each in order of first citation, the usage; the
// request asks for the server tool with the key and API version.
func TestWebSearchRecorded(t *testing.T) {
	rec, err := os.ReadFile("testdata/recorded/anthropic-web-search-tool.1.json")
	if err != nil {
		t.Fatal(err)
	}
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Response{Body: string(rec)})
	p := anthropic.New(anthropic.Config{})
	if !strings.Contains(capsOf(p), "web_search") {
		t.Fatalf("capabilities %s", capsOf(p))
	}
	res, err := p.WebSearch(context.Background(), sdk.Endpoint{BaseURL: fake.URL, APIKey: "sk-ant-test"}, sdk.WebSearchRequest{Model: "claude-sonnet-4-20250514", Query: "tech news today"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, "Let me search for more specific tech news") || !strings.Contains(res.Text, "sentenced to two years in prison") ||
		!strings.HasSuffix(res.Text, "stories from September 26, 2024.") {
		t.Fatalf("text %.200q … %.200q", res.Text, res.Text[max(0, len(res.Text)-200):])
	}
	want := []string{"https://acecomments.mu.nu/?post=411647", "https://www.crescendo.ai/news/latest-ai-news-and-updates"}
	if len(res.Sources) != len(want) || res.Sources[0].URL != want[0] || res.Sources[1].URL != want[1] || res.Sources[0].Title != "Daily Tech News 26 September 2024" {
		t.Fatalf("sources %+v", res.Sources)
	}
	if res.Usage == nil || res.Usage.InputTokens != 27118 || res.Usage.OutputTokens != 600 || res.Usage.Model != "claude-sonnet-4-20250514" {
		t.Fatalf("usage %+v", res.Usage)
	}
	r := fake.LastRequest()
	body := r.JSON()
	tools, _ := body["tools"].([]any)
	tool, _ := tools[0].(map[string]any)
	if r.Path != "/v1/messages" || r.Header.Get("x-api-key") != "sk-ant-test" || r.Header.Get("anthropic-version") == "" ||
		len(tools) != 1 || tool["type"] != anthropic.WebSearchTool || tool["name"] != "web_search" || tool["max_uses"] != float64(5) ||
		body["model"] != "claude-sonnet-4-20250514" || body["stream"] != nil {
		t.Fatalf("request %s %s", r.Path, r.Body)
	}
}

// Searches that failed: with no answer, the service's error code decides
// the category ("unavailable" lets the kernel use its fallback search);
// with an answer, the answer stands and the pages found are its sources
// when it cites none.
func TestWebSearchFailuresAndUncited(t *testing.T) {
	fake := openaitest.New(t)
	p := anthropic.New(anthropic.Config{})
	ep := sdk.Endpoint{BaseURL: fake.URL, APIKey: "k"}
	search := func(body string) (sdk.WebSearchResult, error) {
		fake.Enqueue(openaitest.Response{Body: body})
		return p.WebSearch(context.Background(), ep, sdk.WebSearchRequest{Model: "claude-sonnet-4-5", Query: "q"})
	}
	failed := func(code string) string {
		return `{"model":"m","content":[{"type":"server_tool_use","id":"s1","name":"web_search","input":{"query":"q"}},` +
			`{"type":"web_search_tool_result","tool_use_id":"s1","content":{"type":"web_search_tool_result_error","error_code":"` + code + `"}}],"usage":{"input_tokens":5,"output_tokens":1}}`
	}
	for code, want := range map[string]sdk.ErrorCategory{"unavailable": sdk.CategoryUnavailable, "too_many_requests": sdk.CategoryRateLimit,
		"max_uses_exceeded": sdk.CategoryBadRequest, "something_new": sdk.CategoryServer} {
		_, err := search(failed(code))
		var e *sdk.Error
		if !errors.As(err, &e) || e.Category != want || !strings.Contains(e.Message, code) {
			t.Fatalf("%s: %v", code, err)
		}
	}
	res, err := search(`{"model":"m","content":[{"type":"web_search_tool_result","tool_use_id":"s1","content":[` +
		`{"type":"web_search_result","url":"https://a.example/","title":"A"},{"type":"web_search_result","url":"https://a.example/","title":"A again"},{"type":"web_search_result","url":"https://b.example/","title":"B"}]},` +
		`{"type":"text","text":"An answer without citations."}],"usage":{"input_tokens":5,"output_tokens":4}}`)
	if err != nil || res.Text != "An answer without citations." || len(res.Sources) != 2 || res.Sources[1].URL != "https://b.example/" {
		t.Fatalf("uncited: %+v %v", res, err)
	}
	if _, err := search(`{"model":"m","content":[]}`); err == nil || !strings.Contains(err.Error(), "answered nothing") {
		t.Fatalf("empty: %v", err)
	}
}

// Claude 3.7 Sonnet and later declare web search; older models do not.
func TestWebSearchCapabilityByFamily(t *testing.T) {
	p := anthropic.New(anthropic.Config{})
	for model, want := range map[string]bool{"claude-sonnet-4-5": true, "claude-opus-4-1": true, "claude-3-7-sonnet-latest": true,
		"claude-3-5-haiku-latest": true, "claude-3-haiku-20240307": false, "claude-3-opus-20240229": false} {
		c, _ := p.ResolveCapabilities(context.Background(), sdk.Endpoint{}, model)
		if c.WebSearch == nil || *c.WebSearch != want {
			t.Errorf("%s: webSearch %v, want %v", model, c.WebSearch, want)
		}
	}
}

func capsOf(p *anthropic.Provider) string {
	var s []string
	for _, c := range p.Describe().Capabilities {
		s = append(s, string(c))
	}
	return strings.Join(s, ",")
}

// A search turn the service pauses (pause_turn) is sent back as it is and
// goes on: the answer is the parts' text with the pages cited, its usage
// both requests'. A turn that keeps pausing is given up after three
// continuations, with what it answered so far.
func TestWebSearchPauseTurn(t *testing.T) {
	rec, err := os.ReadFile("testdata/recorded/anthropic-web-search-tool.1.json")
	if err != nil {
		t.Fatal(err)
	}
	paused := `{"model":"claude-sonnet-4-5","stop_reason":"pause_turn","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"tech news"}},` +
		`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://early.example/","title":"Early"}]}],"usage":{"input_tokens":100,"output_tokens":10}}`
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Response{Body: paused}, openaitest.Response{Body: string(rec)})
	p := anthropic.New(anthropic.Config{})
	ep := sdk.Endpoint{BaseURL: fake.URL, APIKey: "k"}
	res, err := p.WebSearch(context.Background(), ep, sdk.WebSearchRequest{Model: "claude-sonnet-4-5", Query: "tech news today"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, "Let me search for more specific tech news") || res.Usage.InputTokens != 100+27118 || res.Usage.OutputTokens != 10+600 {
		t.Fatalf("answer %.80q usage %+v", res.Text, res.Usage)
	}
	var second struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	if err := json.Unmarshal(fake.Requests()[1].Body, &second); err != nil || len(second.Messages) != 2 || second.Messages[1].Role != "assistant" ||
		!strings.Contains(string(second.Messages[1].Content), `"srvtoolu_1"`) || !strings.Contains(string(second.Messages[1].Content), "https://early.example/") {
		t.Fatalf("continuation %s", fake.Requests()[1].Body)
	}

	// Always paused, never answering: four requests, then the error.
	fake2 := openaitest.New(t)
	for range 5 {
		fake2.Enqueue(openaitest.Response{Body: paused})
	}
	_, err = p.WebSearch(context.Background(), sdk.Endpoint{BaseURL: fake2.URL, APIKey: "k"}, sdk.WebSearchRequest{Model: "claude-sonnet-4-5", Query: "q"})
	if n := len(fake2.Requests()); n != 4 || err == nil || !strings.Contains(err.Error(), "answered nothing") {
		t.Fatalf("%d requests, %v", n, err)
	}
	var last struct{ Messages []json.RawMessage }
	_ = json.Unmarshal(fake2.Requests()[3].Body, &last)
	if len(last.Messages) != 2 {
		t.Fatalf("the paused parts were not merged into one assistant message: %d messages", len(last.Messages))
	}
}
