package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// PRV-8: a model without native search uses the configured fallback search connection.
func TestWebSearchFallback(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS") // gpt-t: no webSearch
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.TextStream(testModel, "no search"))
	k.send(t, sid, "hi")
	w.turnEnd()
	if strings.Contains(string(k.fake.LastRequest().Body), `"name":"web_search"`) {
		t.Fatal("web_search offered without native search or a fallback")
	}
	k.createConn(t, map[string]any{"name": "searcher", "baseUrl": k.fake.BaseURL(), "apiKey": "sk-search",
		"options": []any{map[string]any{"key": "web_search", "value": "responses"}, map[string]any{"key": "web_search_fallback", "value": "true"}},
		"models":  []any{map[string]any{"id": "gpt-plain"}, map[string]any{"id": "gpt-search", "capabilities": map[string]any{"webSearch": true}}}})
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "call_ws", "web_search", `{"query":"latest Go release"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.Response{Body: `{"id":"resp_1","object":"response","model":"gpt-search","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Go 1.26 is out.","annotations":[{"type":"url_citation","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes"}]}]}],"usage":{"input_tokens":50,"output_tokens":10,"total_tokens":60}}`},
		openaitest.TextStream(testModel, "Go 1.26."))
	k.send(t, sid, "what is the latest Go?")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	reqs := k.fake.Requests()
	if !strings.Contains(string(reqs[1].Body), `"name":"web_search"`) {
		t.Fatal("web_search not offered with a fallback configured")
	}
	var body map[string]any
	json.Unmarshal(reqs[2].Body, &body)
	if reqs[2].Path != "/v1/responses" || body["model"] != "gpt-search" || body["input"] != "latest Go release" || reqs[2].Header.Get("Authorization") != "Bearer sk-search" {
		t.Fatalf("search request %s %s", reqs[2].Path, reqs[2].Body)
	}
	msgs := k.messages(t, sid)
	if tool := msgs[4]; deref(tool.ToolName) != "web_search" || tool.IsError || !strings.Contains(tool.Text, "https://go.dev/doc/go1.26") {
		t.Fatalf("tool message %+v", tool)
	}
}

// PRV-8 at run time: a model that declares native search on a route whose
// native search answers that it is unavailable (the openai connection
// without web_search=responses) gets the configured fallback search in the
// same call; without a fallback the tool error says both.
func TestWebSearchFallbackAtRunTime(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, map[string]any{"webSearch": true}, "BYPASS")
	w := k.watch(t, sid)
	searchCall := openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "call_ws", "web_search", `{"query":"latest Go release"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}
	// No fallback configured: the tool error names the native failure.
	k.fake.Enqueue(searchCall, openaitest.TextStream(testModel, "no luck"))
	k.send(t, sid, "search")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	msgs := k.messages(t, sid)
	if tool := msgs[2]; deref(tool.ToolName) != "web_search" || !tool.IsError || !strings.Contains(tool.Text, "native search is unavailable") || !strings.Contains(tool.Text, "does not enable native web search") {
		t.Fatalf("tool message %+v", tool)
	}
	// With a fallback search connection the same call is answered by it.
	k.createConn(t, map[string]any{"name": "searcher", "baseUrl": k.fake.BaseURL(), "apiKey": "sk-search",
		"options": []any{map[string]any{"key": "web_search", "value": "responses"}, map[string]any{"key": "web_search_fallback", "value": "true"}},
		"models":  []any{map[string]any{"id": "gpt-search", "capabilities": map[string]any{"webSearch": true}}}})
	before := len(k.fake.Requests())
	k.fake.Enqueue(searchCall,
		openaitest.Response{Body: `{"id":"resp_1","object":"response","model":"gpt-search","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Go 1.26 is out.","annotations":[{"type":"url_citation","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes"}]}]}],"usage":{"input_tokens":50,"output_tokens":10,"total_tokens":60}}`},
		openaitest.TextStream(testModel, "Go 1.26."))
	k.send(t, sid, "search again")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	reqs := k.fake.Requests()[before:]
	if len(reqs) != 3 || reqs[1].Path != "/v1/responses" || reqs[1].Header.Get("Authorization") != "Bearer sk-search" {
		t.Fatalf("%d requests; search request %s", len(reqs), reqs[1].Path)
	}
	msgs = k.messages(t, sid)
	if tool := msgs[len(msgs)-2]; deref(tool.ToolName) != "web_search" || tool.IsError || !strings.Contains(tool.Text, "https://go.dev/doc/go1.26") {
		t.Fatalf("tool message %+v", tool)
	}
}
