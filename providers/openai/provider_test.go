package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/openai"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// recorder is an sdk.StreamSender that keeps every event in order.
type recorder struct {
	mu     sync.Mutex
	events []string
	text   strings.Builder
	reason strings.Builder
	calls  map[int]*sdk.ToolCallDelta
	usage  []sdk.Usage
	onText func()
}

func (r *recorder) Text(s string) error {
	r.mu.Lock()
	r.events = append(r.events, "text")
	r.text.WriteString(s)
	f := r.onText
	r.mu.Unlock()
	if f != nil {
		f()
	}
	return nil
}

func (r *recorder) Reasoning(s string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "reasoning")
	r.reason.WriteString(s)
	return nil
}

func (r *recorder) ToolCall(d sdk.ToolCallDelta) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "tool_call")
	if r.calls == nil {
		r.calls = map[int]*sdk.ToolCallDelta{}
	}
	c, ok := r.calls[d.Index]
	if !ok {
		c = &sdk.ToolCallDelta{Index: d.Index}
		r.calls[d.Index] = c
	}
	if d.ID != "" {
		c.ID = d.ID
	}
	if d.Name != "" {
		c.Name = d.Name
	}
	c.Arguments += d.Arguments
	return nil
}

func (r *recorder) Usage(u sdk.Usage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "usage")
	r.usage = append(r.usage, u)
	return nil
}

func (r *recorder) State([]byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "state")
	return nil
}

func setup(t *testing.T) (*openaitest.Server, *openai.Provider, sdk.Endpoint) {
	t.Helper()
	srv := openaitest.New(t)
	return srv, openai.New(openai.Config{}), sdk.Endpoint{ConnectionID: "conn_1", ProviderKind: "openai", BaseURL: srv.BaseURL(), APIKey: "sk-test"}
}

func userRequest(text string) sdk.Request {
	return sdk.Request{Model: "gpt-test", Messages: []sdk.Message{
		{Role: sdk.RoleSystem, Content: []sdk.ContentPart{{Type: "text", Text: "be brief"}}},
		{Role: sdk.RoleUser, Content: []sdk.ContentPart{{Type: "text", Text: text}}},
	}}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func loadSSE(t *testing.T, name string) openaitest.Response {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return openaitest.Response{SSE: true, Body: string(b)}
}

func TestStreamChunkedText(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Enqueue(openaitest.TextStream("gpt-test-0613", "Hel", "lo, ", "world"))
	rec := &recorder{}
	finish, err := p.Stream(testCtx(t), ep, userRequest("hi"), rec)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if finish != "stop" || rec.text.String() != "Hello, world" {
		t.Fatalf("finish %q text %q", finish, rec.text.String())
	}
	if len(rec.usage) != 1 || rec.usage[0].Model != "gpt-test-0613" || rec.usage[0].InputTokens != 10 {
		t.Fatalf("usage %+v", rec.usage)
	}
	req := srv.LastRequest()
	if req.Path != "/v1/chat/completions" || req.Header.Get("Authorization") != "Bearer sk-test" {
		t.Fatalf("request %s auth %q", req.Path, req.Header.Get("Authorization"))
	}
	body := req.JSON()
	if body["model"] != "gpt-test" || body["stream"] != true {
		t.Fatalf("body %v", body)
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Fatalf("stream_options %v", body["stream_options"])
	}
	msgs := body["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" || msgs[1].(map[string]any)["content"] != "hi" {
		t.Fatalf("messages %v", msgs)
	}
	if _, ok := body["reasoning_effort"]; ok {
		t.Fatalf("reasoning_effort sent without being asked: %v", body)
	}
}

func TestStreamNoKeyNoAuthorization(t *testing.T) {
	srv, p, ep := setup(t)
	ep.APIKey = ""
	srv.Enqueue(openaitest.TextStream("m", "ok"))
	if _, err := p.Stream(testCtx(t), ep, userRequest("hi"), &recorder{}); err != nil {
		t.Fatal(err)
	}
	if h, ok := srv.LastRequest().Header["Authorization"]; ok {
		t.Fatalf("authorization sent without key: %v", h)
	}
}

func TestStreamReasoningContentAndCachedUsage(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Enqueue(loadSSE(t, "reasoning.sse"))
	req := userRequest("hello")
	req.ReasoningEffort = "high"
	req.MaxOutputTokens = 2048
	rec := &recorder{}
	finish, err := p.Stream(testCtx(t), ep, req, rec)
	if err != nil {
		t.Fatal(err)
	}
	if finish != "stop" || rec.reason.String() != "The user greets me." || rec.text.String() != "Hello there!" {
		t.Fatalf("finish %q reasoning %q text %q", finish, rec.reason.String(), rec.text.String())
	}
	want := sdk.Usage{InputTokens: 12, OutputTokens: 9, TotalTokens: 21, CachedTokens: 8, Model: "deepseek-reasoner"}
	if len(rec.usage) != 1 || rec.usage[0] != want {
		t.Fatalf("usage %+v", rec.usage)
	}
	body := srv.LastRequest().JSON()
	if body["reasoning_effort"] != "high" || body["max_tokens"] != float64(2048) {
		t.Fatalf("body %v", body)
	}
}

func TestStreamReasoningFieldAlias(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Enqueue(openaitest.Response{Events: []string{
		openaitest.Chunk("m", map[string]any{"reasoning": "thinking"}, ""),
		openaitest.Chunk("m", map[string]any{"content": "done"}, "stop"),
	}})
	rec := &recorder{}
	if _, err := p.Stream(testCtx(t), ep, userRequest("x"), rec); err != nil {
		t.Fatal(err)
	}
	if rec.reason.String() != "thinking" || rec.text.String() != "done" {
		t.Fatalf("reasoning %q text %q", rec.reason.String(), rec.text.String())
	}
}

func TestStreamInterleavedToolCalls(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Enqueue(loadSSE(t, "tool_calls.sse"))
	req := userRequest("look")
	req.Tools = []sdk.ToolSchema{
		{Name: "read_file", Description: "read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "grep", Description: "search", Parameters: json.RawMessage(`{"type":"object"}`)},
	}
	rec := &recorder{}
	finish, err := p.Stream(testCtx(t), ep, req, rec)
	if err != nil {
		t.Fatal(err)
	}
	if finish != "tool_calls" {
		t.Fatalf("finish %q", finish)
	}
	c0, c1 := rec.calls[0], rec.calls[1]
	if c0 == nil || c1 == nil {
		t.Fatalf("calls %+v", rec.calls)
	}
	if c0.ID != "call_aaa" || c0.Name != "read_file" || c0.Arguments != `{"path":"main.go"}` {
		t.Fatalf("call 0 %+v", c0)
	}
	if c1.ID != "call_bbb" || c1.Name != "grep" || c1.Arguments != `{"pattern": "TODO"}` {
		t.Fatalf("call 1 %+v", c1)
	}
	if rec.usage[0].CachedTokens != 64 || rec.usage[0].Model != "gpt-4o-2024-08-06" {
		t.Fatalf("usage %+v", rec.usage[0])
	}
	tools := srv.LastRequest().JSON()["tools"].([]any)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	if tools[0].(map[string]any)["type"] != "function" || fn["name"] != "read_file" || fn["parameters"].(map[string]any)["type"] != "object" {
		t.Fatalf("tools %v", tools)
	}
}

func TestRequestMaterialization(t *testing.T) {
	srv, p, ep := setup(t)
	ep.BaseURL = srv.URL + "/v1/" // trailing slash is tolerated
	ep.Options = map[string]string{openai.OptionMaxTokensField: "max_completion_tokens"}
	srv.Enqueue(openaitest.TextStream("m", "ok"))
	req := sdk.Request{Model: "gpt-vision", MaxOutputTokens: 100, Messages: []sdk.Message{
		{Role: sdk.RoleUser, Content: []sdk.ContentPart{
			{Type: "text", Text: "what is this?"},
			{Type: "image", MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
		}},
		{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "call_1", Name: "grep", Input: json.RawMessage(`{"q":"x"}`)}}},
		{Role: sdk.RoleTool, ToolCallID: "call_1", Content: []sdk.ContentPart{{Type: "text", Text: "no match"}}},
	}}
	if _, err := p.Stream(testCtx(t), ep, req, &recorder{}); err != nil {
		t.Fatal(err)
	}
	got := srv.LastRequest()
	if got.Path != "/v1/chat/completions" {
		t.Fatalf("path %q", got.Path)
	}
	var body struct {
		MaxCompletionTokens int64 `json:"max_completion_tokens"`
		MaxTokens           int64 `json:"max_tokens"`
		Messages            []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.MaxCompletionTokens != 100 || body.MaxTokens != 0 {
		t.Fatalf("limits %+v", body)
	}
	if want := `[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw=="}}]`; string(body.Messages[0].Content) != want {
		t.Fatalf("user content %s", body.Messages[0].Content)
	}
	a := body.Messages[1]
	if string(a.Content) != "null" || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "call_1" || a.ToolCalls[0].Type != "function" ||
		a.ToolCalls[0].Function.Name != "grep" || a.ToolCalls[0].Function.Arguments != `{"q":"x"}` {
		t.Fatalf("assistant %+v content %s", a, a.Content)
	}
	if tm := body.Messages[2]; tm.Role != "tool" || tm.ToolCallID != "call_1" || string(tm.Content) != `"no match"` {
		t.Fatalf("tool message %+v", tm)
	}
}

func TestErrorCategories(t *testing.T) {
	retry := http.Header{"Retry-After": []string{"7"}}
	cases := []struct {
		name   string
		resp   openaitest.Response
		want   sdk.ErrorCategory
		status int
	}{
		{"context overflow code", openaitest.Error(400, "invalid_request_error", "context_length_exceeded",
			"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages."), sdk.CategoryContextOverflow, 400},
		{"context overflow message only", openaitest.Error(400, "invalid_request_error", "", "prompt is too long: 210000 tokens > 200000 maximum"), sdk.CategoryContextOverflow, 400},
		{"rate limit", withHeader(openaitest.Error(429, "requests", "rate_limit_exceeded",
			"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000."), retry), sdk.CategoryRateLimit, 429},
		{"quota", openaitest.Error(429, "insufficient_quota", "insufficient_quota",
			"You exceeded your current quota, please check your plan and billing details."), sdk.CategoryQuota, 429},
		{"overloaded 503", openaitest.Error(503, "server_error", "", "The engine is currently overloaded, please try again later"), sdk.CategoryThrottling, 503},
		{"overloaded 529", openaitest.Response{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, sdk.CategoryThrottling, 529},
		{"auth 401", openaitest.Error(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-te****. You can find your API key at https://platform.openai.com/account/api-keys."), sdk.CategoryAuth, 401},
		{"auth 403", openaitest.Error(403, "invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported"), sdk.CategoryAuth, 403},
		{"bad request", openaitest.Error(400, "invalid_request_error", "invalid_value", "Invalid value for 'reasoning_effort': 'extreme'."), sdk.CategoryBadRequest, 400},
		{"not found", openaitest.Error(404, "invalid_request_error", "model_not_found", "The model `gpt-9` does not exist or you do not have access to it."), sdk.CategoryBadRequest, 404},
		{"server", openaitest.Error(500, "server_error", "", "The server had an error while processing your request. Sorry about that!"), sdk.CategoryServer, 500},
		{"bad gateway html", openaitest.Response{Status: 502, Body: "<html><body>502 Bad Gateway</body></html>"}, sdk.CategoryServer, 502},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, p, ep := setup(t)
			srv.Enqueue(tc.resp)
			_, err := p.Stream(testCtx(t), ep, userRequest("hi"), &recorder{})
			var pe *sdk.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not *sdk.Error", err)
			}
			if pe.Category != tc.want || pe.StatusCode != tc.status || pe.Message == "" {
				t.Fatalf("got %+v, want %s", pe, tc.want)
			}
			if tc.resp.Header != nil && pe.RetryAfter != 7*time.Second {
				t.Fatalf("retry after %v", pe.RetryAfter)
			}
		})
	}
}

func withHeader(r openaitest.Response, h http.Header) openaitest.Response {
	r.Header = h
	return r
}

func TestStreamErrorObjectInStream(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Enqueue(openaitest.Response{NoDone: true, Events: []string{
		openaitest.Chunk("m", map[string]any{"content": "partial"}, ""),
		`{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`,
	}})
	rec := &recorder{}
	_, err := p.Stream(testCtx(t), ep, userRequest("hi"), rec)
	var pe *sdk.Error
	if !errors.As(err, &pe) || pe.Category != sdk.CategoryRateLimit {
		t.Fatalf("err %v", err)
	}
	if rec.text.String() != "partial" {
		t.Fatalf("text before error %q", rec.text.String())
	}
}

func TestStreamOutputLimit(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Enqueue(openaitest.Response{Events: []string{
		openaitest.Chunk("m", map[string]any{"content": "a long ans"}, "length"),
		openaitest.UsageChunk("m", 5, 16, 0),
	}})
	rec := &recorder{}
	_, err := p.Stream(testCtx(t), ep, userRequest("hi"), rec)
	var pe *sdk.Error
	if !errors.As(err, &pe) || pe.Category != sdk.CategoryOutputLimit {
		t.Fatalf("err %v", err)
	}
	if got := strings.Join(rec.events, ","); got != "text,usage" {
		t.Fatalf("events before the error %s", got)
	}
}

func TestStreamDroppedConnection(t *testing.T) {
	srv, p, ep := setup(t)
	r := openaitest.TextStream("m", "one ", "two ", "three")
	r.DropAfter = 3 // role chunk + two text chunks, then the connection dies
	srv.Enqueue(r)
	rec := &recorder{}
	_, err := p.Stream(testCtx(t), ep, userRequest("hi"), rec)
	var pe *sdk.Error
	if !errors.As(err, &pe) || pe.Category != sdk.CategoryNetwork {
		t.Fatalf("err %v", err)
	}
	if rec.text.String() != "one two " {
		t.Fatalf("partial text %q", rec.text.String())
	}
}

func TestStreamEndsWithoutDone(t *testing.T) {
	srv, p, ep := setup(t)
	r := openaitest.TextStream("m", "cut")
	r.NoDone = true
	srv.Enqueue(r)
	_, err := p.Stream(testCtx(t), ep, userRequest("hi"), &recorder{})
	var pe *sdk.Error
	if !errors.As(err, &pe) || pe.Category != sdk.CategoryNetwork {
		t.Fatalf("err %v", err)
	}
}

func TestStreamDialFailure(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Close()
	_, err := p.Stream(testCtx(t), ep, userRequest("hi"), &recorder{})
	var pe *sdk.Error
	if !errors.As(err, &pe) || pe.Category != sdk.CategoryNetwork {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(err.Error(), "sk-test") {
		t.Fatalf("key leaked into error: %v", err)
	}
}

func TestStreamCancelledByContext(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Enqueue(openaitest.Response{Hang: true, Events: []string{openaitest.Chunk("m", map[string]any{"content": "slow"}, "")}})
	ctx, cancel := context.WithCancel(testCtx(t))
	rec := &recorder{onText: cancel} // cancel once the first delta arrived
	_, err := p.Stream(ctx, ep, userRequest("hi"), rec)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if err := srv.WaitCancelled(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

func TestCompleteDetailed(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Enqueue(openaitest.Completion("gpt-test-1", "A short title", "stop", 30, 4))
	c, err := p.CompleteDetailed(testCtx(t), ep, userRequest("title please"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Text != "A short title" || c.FinishReason != "stop" || c.Usage == nil || c.Usage.TotalTokens != 34 || c.Usage.Model != "gpt-test-1" {
		t.Fatalf("completion %+v usage %+v", c, c.Usage)
	}
	if body := srv.LastRequest().JSON(); body["stream"] != nil || body["stream_options"] != nil {
		t.Fatalf("non-streaming body %v", body)
	}
}

func TestListModels(t *testing.T) {
	srv, p, ep := setup(t)
	srv.Enqueue(openaitest.Response{Body: `{"object":"list","data":[{"id":"gpt-4o","object":"model","owned_by":"system"},{"id":"o3-mini","object":"model"}]}`})
	models, err := p.ListModels(testCtx(t), ep)
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 2 || models[0].ID != "gpt-4o" || models[1].ID != "o3-mini" {
		t.Fatalf("models %+v", models)
	}
	if r := srv.LastRequest(); r.Method != http.MethodGet || r.Path != "/v1/models" {
		t.Fatalf("request %s %s", r.Method, r.Path)
	}
}

func TestWebSearch(t *testing.T) {
	srv, p, ep := setup(t)
	_, err := p.WebSearch(testCtx(t), ep, sdk.WebSearchRequest{Model: "gpt-4o", Query: "go 1.26"})
	var pe *sdk.Error
	if !errors.As(err, &pe) || pe.Category != sdk.CategoryUnavailable {
		t.Fatalf("unconfigured web search: %v", err)
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("unconfigured web search sent a request")
	}
	ep.Options = map[string]string{openai.OptionWebSearch: "responses"}
	srv.Enqueue(openaitest.Response{Body: `{"id":"resp_1","object":"response","model":"gpt-4o-2024","output":[
		{"type":"web_search_call","id":"ws_1","status":"completed"},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Go 1.26 is out.","annotations":[{"type":"url_citation","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes"}]}]}],
		"usage":{"input_tokens":50,"output_tokens":10,"total_tokens":60,"input_tokens_details":{"cached_tokens":0}}}`})
	res, err := p.WebSearch(testCtx(t), ep, sdk.WebSearchRequest{Model: "gpt-4o", Query: "go 1.26"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Go 1.26 is out." || len(res.Sources) != 1 || res.Sources[0].URL != "https://go.dev/doc/go1.26" || res.Usage.TotalTokens != 60 {
		t.Fatalf("result %+v", res)
	}
	body := srv.LastRequest().JSON()
	if srv.LastRequest().Path != "/v1/responses" || body["input"] != "go 1.26" {
		t.Fatalf("request %v", body)
	}
}

// An endless model list fails to decode instead of growing the plugin.
func TestListModelsBounded(t *testing.T) {
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Response{Body: `{"data":[` + strings.Repeat(`{"id":"m"},`, 9<<20/11) + `{"id":"last"}]}`})
	_, err := openai.New(openai.Config{}).ListModels(context.Background(), sdk.Endpoint{BaseURL: fake.BaseURL()})
	var e *sdk.Error
	if !errors.As(err, &e) || !strings.Contains(e.Message, "decode model list") {
		t.Fatalf("err %v", err)
	}
}
