package anthropic

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/internal/streamtest"
)

func text(role, s string) sdk.Message {
	return sdk.Message{Role: role, Content: []sdk.ContentPart{{Type: "text", Text: s}}}
}

func encode(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestThinkingOffForAPendingRoundWithoutThinking(t *testing.T) {
	call := sdk.Message{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "toolu_1", Name: "read", Input: json.RawMessage(`{"path":"a"}`)}}}
	req := sdk.Request{Model: "claude-sonnet-4-5", ReasoningEffort: "high", Messages: []sdk.Message{
		text(sdk.RoleSystem, "sys"), text(sdk.RoleUser, "hi"), call, {Role: sdk.RoleTool, ToolCallID: "toolu_1", Content: []sdk.ContentPart{{Type: "text", Text: "x"}}},
	}}
	r, err := buildRequest(sdk.Endpoint{}, req, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Thinking != nil {
		t.Fatalf("thinking on for a round that began without it: %+v", r.Thinking)
	}
	// With the signed block handed back, thinking continues.
	state, _ := json.Marshal(nativeState{Blocks: []json.RawMessage{json.RawMessage(`{"type":"thinking","thinking":"t","signature":"s"}`)}})
	req.Messages[2].State = state
	if r, _ = buildRequest(sdk.Endpoint{}, req, true); r.Thinking == nil || r.Thinking.BudgetTokens != 24000 || r.MaxTokens != 24000+DefaultMaxTokens {
		t.Fatalf("thinking %+v max %d", r.Thinking, r.MaxTokens)
	}
	body := encode(t, r)
	if !strings.Contains(body, `{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use"`) {
		t.Fatalf("thinking block not first: %s", body)
	}
}

func TestToolResultImagesAndAlternation(t *testing.T) {
	img := []byte{0x89, 'P', 'N', 'G'}
	req := sdk.Request{Model: "m", Messages: []sdk.Message{
		text(sdk.RoleUser, "look"),
		{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "a", Name: "read"}, {ID: "b", Name: "read"}}},
		{Role: sdk.RoleTool, ToolCallID: "a", Content: []sdk.ContentPart{{Type: "text", Text: "png:"}, {Type: "image", MediaType: "image/png", Data: img}}},
		{Role: sdk.RoleTool, ToolCallID: "b", Content: []sdk.ContentPart{{Type: "text", Text: ""}}},
		text(sdk.RoleSystem, "hook context"),
		text(sdk.RoleUser, "and?"),
	}}
	r, err := buildRequest(sdk.Endpoint{Options: map[string]string{OptionCache: "off"}}, req, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Messages) != 3 || r.Messages[2].Role != "user" || len(r.Messages[2].Content) != 4 {
		t.Fatalf("messages %s", encode(t, r.Messages))
	}
	body := encode(t, r)
	for _, want := range []string{
		`"tool_use_id":"a","content":[{"type":"text","text":"png:"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw=="}}]`,
		`"tool_use_id":"b","content":[{"type":"text","text":"[no output]"}]`,
		`"input":{}`,
		`<kernel-context>\nhook context\n</kernel-context>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %s in %s", want, body)
		}
	}
	if strings.Contains(body, "cache_control") {
		t.Fatalf("prompt_cache=off still marks breakpoints: %s", body)
	}
}

func TestClassify(t *testing.T) {
	body := func(typ, msg string) []byte {
		return []byte(`{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"}}`)
	}
	for _, c := range []struct {
		status int
		body   []byte
		want   sdk.ErrorCategory
	}{
		{529, body("overloaded_error", "Overloaded"), sdk.CategoryThrottling},
		{429, body("rate_limit_error", "slow down"), sdk.CategoryRateLimit},
		{400, body("invalid_request_error", "prompt is too long: 201000 tokens > 200000 maximum"), sdk.CategoryContextOverflow},
		{413, body("request_too_large", "Request exceeds the maximum allowed number of bytes."), sdk.CategoryContextOverflow},
		{401, body("authentication_error", "invalid x-api-key"), sdk.CategoryAuth},
		{403, body("permission_error", "no"), sdk.CategoryAuth},
		{402, body("billing_error", "credit balance too low"), sdk.CategoryQuota},
		{500, body("api_error", "Internal server error"), sdk.CategoryServer},
		{400, body("invalid_request_error", "messages: roles must alternate"), sdk.CategoryBadRequest},
		{502, []byte("<html>bad gateway</html>"), sdk.CategoryServer},
	} {
		e := classify(c.status, http.Header{"Retry-After": {"12"}}, c.body)
		if e.Category != c.want || e.StatusCode != c.status || e.RetryAfter != 12*time.Second {
			t.Errorf("%d %s: %+v, want %s", c.status, c.body, e, c.want)
		}
	}
}

type rec = streamtest.Recorder

func TestStreamCutBeforeMessageStopKeepsNoState(t *testing.T) {
	stream := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}\n\n"
	r := &rec{}
	_, err := readStream(context.Background(), strings.NewReader(stream), r)
	var e *sdk.Error
	if err == nil || !asErr(err, &e) || e.Category != sdk.CategoryNetwork || r.StateOut != nil || r.ReasoningOut.String() != "hm" {
		t.Fatalf("err %v state %q reasoning %q", err, r.StateOut, r.ReasoningOut.String())
	}
}

func asErr(err error, target **sdk.Error) bool {
	e, ok := err.(*sdk.Error)
	*target = e
	return ok
}

func TestAPIURL(t *testing.T) {
	for base, want := range map[string]string{
		"":                             "https://api.anthropic.com/v1/messages",
		"https://api.anthropic.com/":   "https://api.anthropic.com/v1/messages",
		"https://api.anthropic.com/v1": "https://api.anthropic.com/v1/messages",
		"http://127.0.0.1:9/proxy/v1/": "http://127.0.0.1:9/proxy/v1/messages",
		"http://127.0.0.1:9/anthropic": "http://127.0.0.1:9/anthropic/v1/messages",
	} {
		if got := apiURL(sdk.Endpoint{BaseURL: base}, "/v1/messages"); got != want {
			t.Errorf("%q: %s, want %s", base, got, want)
		}
	}
}

// Claude 4.6 and later think adaptively: {"type":"adaptive","display":
// "summarized"} with the session's effort in output_config, never
// budget_tokens (Opus 4.7 refuses it); xhigh goes as max where it does not
// exist. Earlier models and names that are not Claude's keep the budget.
func TestAdaptiveThinking(t *testing.T) {
	for _, c := range []struct {
		model, effort string
		want          string // "" = budget_tokens
	}{
		{"claude-opus-4-7", "high", "high"},
		{"claude-opus-4-7", "xhigh", "xhigh"},
		{"claude-opus-4-6", "xhigh", "max"},
		{"claude-sonnet-4-6", "minimal", "low"},
		{"claude-sonnet-5-20261101", "medium", "medium"},
		{"claude-mythos-preview", "max", "max"},
		{"us.anthropic.claude-opus-4-8-v1:0", "low", "low"},
		{"anthropic/claude-opus-4.7", "xhigh", "xhigh"},
		{"anthropic/claude-sonnet-4.5", "high", ""},
		{"claude-sonnet-4-5-20250929", "high", ""},
		{"claude-opus-4-5", "high", ""},
		{"claude-3-7-sonnet-20250219", "high", ""},
		{"glm-4.6", "high", ""},
	} {
		r, err := buildRequest(sdk.Endpoint{}, sdk.Request{Model: c.model, ReasoningEffort: c.effort, MaxOutputTokens: 64000, Messages: []sdk.Message{text(sdk.RoleUser, "hi")}}, true)
		if err != nil {
			t.Fatal(err)
		}
		body := encode(t, r)
		if c.want == "" {
			if r.Thinking == nil || r.Thinking.Type != "enabled" || r.Thinking.BudgetTokens == 0 || r.OutputConfig != nil {
				t.Errorf("%s: %s", c.model, body)
			}
			continue
		}
		if !strings.Contains(body, `"thinking":{"type":"adaptive","display":"summarized"}`) || !strings.Contains(body, `"output_config":{"effort":"`+c.want+`"}`) || strings.Contains(body, "budget_tokens") || r.MaxTokens != 64000 {
			t.Errorf("%s %s: %s", c.model, c.effort, body)
		}
	}
	// A tool round whose last step did not think goes on thinking (the
	// model may skip a step; only budget thinking needs the block).
	call := sdk.Message{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "toolu_1", Name: "read", Input: json.RawMessage(`{"path":"a"}`)}}}
	pending := []sdk.Message{text(sdk.RoleUser, "hi"), call, {Role: sdk.RoleTool, ToolCallID: "toolu_1", Content: []sdk.ContentPart{{Type: "text", Text: "x"}}}}
	if r, _ := buildRequest(sdk.Endpoint{}, sdk.Request{Model: "claude-opus-4-7", ReasoningEffort: "high", Messages: pending}, true); r.Thinking == nil || r.Thinking.Type != "adaptive" {
		t.Fatalf("adaptive thinking dropped in a pending round: %+v", r.Thinking)
	}
	// No effort: no thinking field (the model's default).
	r, _ := buildRequest(sdk.Endpoint{}, sdk.Request{Model: "claude-opus-4-7", Messages: []sdk.Message{text(sdk.RoleUser, "hi")}}, true)
	if r.Thinking != nil || r.OutputConfig != nil {
		t.Fatalf("%+v %+v", r.Thinking, r.OutputConfig)
	}
	// The model list: 128k output and xhigh from Opus 4.7 on.
	c := known("claude-opus-4-7")
	if *c.MaxOutputTokens != 128000 || strings.Join(c.ReasoningEfforts, ",") != "low,medium,high,max,xhigh" {
		t.Fatalf("opus 4.7 %+v %v", *c.MaxOutputTokens, c.ReasoningEfforts)
	}
	if c := known("claude-sonnet-4-6"); *c.MaxOutputTokens != 128000 || len(c.ReasoningEfforts) != 4 {
		t.Fatalf("sonnet 4.6 %+v", c.ReasoningEfforts)
	}
	if c := known("claude-haiku-4-5"); *c.MaxOutputTokens != 64000 {
		t.Fatalf("haiku 4.5 %d", *c.MaxOutputTokens)
	}
}

// Tool ids another provider made (Kimi's "functions.read:0", after a
// fallback or a route change) go back in the form the API takes
// ([A-Za-z0-9_-]), the same for the call and its result.
func TestForeignToolIDs(t *testing.T) {
	req := sdk.Request{Model: "claude-sonnet-4-5", Messages: []sdk.Message{
		text(sdk.RoleUser, "read a"),
		{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "functions.read:0", Name: "read", Input: json.RawMessage(`{"path":"a"}`)}, {ID: "toolu_01native", Name: "read", Input: json.RawMessage(`{"path":"b"}`)}}},
		{Role: sdk.RoleTool, ToolCallID: "functions.read:0", Content: []sdk.ContentPart{{Type: "text", Text: "A"}}},
		{Role: sdk.RoleTool, ToolCallID: "toolu_01native", Content: []sdk.ContentPart{{Type: "text", Text: "B"}}},
	}}
	r, err := buildRequest(sdk.Endpoint{}, req, true)
	if err != nil {
		t.Fatal(err)
	}
	call := r.Messages[1].Content[0].(toolUseBlock)
	result := r.Messages[2].Content[0].(toolResultBlock)
	if call.ID != result.ToolUseID || !strings.HasPrefix(call.ID, "functions_read_0_") || strings.ContainsAny(call.ID, ".:") {
		t.Fatalf("call %q result %q", call.ID, result.ToolUseID)
	}
	if r.Messages[1].Content[1].(toolUseBlock).ID != "toolu_01native" || r.Messages[2].Content[1].(toolResultBlock).ToolUseID != "toolu_01native" {
		t.Fatal("an id the API made was changed")
	}
}
