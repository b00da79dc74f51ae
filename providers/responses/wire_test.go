package responses

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/internal/streamtest"
)

type rec = streamtest.Recorder

func sse(evs ...string) string {
	var b strings.Builder
	for _, e := range evs {
		var typ struct{ Type string }
		_ = json.Unmarshal([]byte(e), &typ)
		b.WriteString("event: " + typ.Type + "\ndata: " + e + "\n\n")
	}
	return b.String()
}

// Some servers send a function call's arguments only in output_item.done.
func TestArgumentsOnlyInItemDone(t *testing.T) {
	r := &rec{}
	reason, err := readStream(context.Background(), slog.New(slog.DiscardHandler), strings.NewReader(sse(
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc","call_id":"c1","name":"glob","arguments":"{\"pattern\":\"*\"}"}}`,
		`{"type":"response.completed","response":{"model":"m","status":"completed","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":2,"total_tokens":12}}}`,
	)), r)
	if err != nil || reason != "tool_calls" || len(r.Calls) != 2 || r.Calls[0].ID != "c1" || r.Calls[1].Arguments != `{"pattern":"*"}` {
		t.Fatalf("%v %q %+v", err, reason, r.Calls)
	}
	if len(r.Usages) != 1 || r.Usages[0].CachedTokens != 4 || r.Usages[0].InputTokens != 10 || r.StateOut != nil {
		t.Fatalf("usage %+v state %q", r.Usages, r.StateOut)
	}
}

func TestStreamCutBeforeCompletedKeepsNoState(t *testing.T) {
	r := &rec{}
	_, err := readStream(context.Background(), slog.New(slog.DiscardHandler), strings.NewReader(sse(
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs","summary":[],"encrypted_content":"x"}}`,
	)), r)
	if e, ok := err.(*sdk.Error); !ok || e.Category != sdk.CategoryNetwork || r.StateOut != nil {
		t.Fatalf("err %v state %q", err, r.StateOut)
	}
}

func TestIncompleteIsLength(t *testing.T) {
	r := &rec{}
	reason, err := readStream(context.Background(), slog.New(slog.DiscardHandler), strings.NewReader(sse(
		`{"type":"response.output_text.delta","output_index":0,"delta":"par"}`,
		`{"type":"response.incomplete","response":{"model":"m","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":1,"output_tokens":1}}}`,
	)), r)
	if err != nil || reason != "length" || r.TextOut.String() != "par" {
		t.Fatalf("%v %q", err, reason)
	}
}

func TestClassify(t *testing.T) {
	body := func(typ, code, msg string) []byte {
		return []byte(`{"error":{"message":"` + msg + `","type":"` + typ + `","code":"` + code + `","param":null}}`)
	}
	for _, c := range []struct {
		status int
		body   []byte
		want   sdk.ErrorCategory
	}{
		{429, body("requests", "rate_limit_exceeded", "Rate limit reached"), sdk.CategoryRateLimit},
		{429, body("insufficient_quota", "insufficient_quota", "You exceeded your current quota"), sdk.CategoryQuota},
		{400, body("invalid_request_error", "context_length_exceeded", "Your input exceeds the context window of this model."), sdk.CategoryContextOverflow},
		{503, body("server_error", "server_is_overloaded", "The server is overloaded"), sdk.CategoryThrottling},
		{401, body("invalid_request_error", "invalid_api_key", "Incorrect API key provided"), sdk.CategoryAuth},
		{500, body("server_error", "server_error", "oops"), sdk.CategoryServer},
		{400, body("invalid_request_error", "", "Unknown parameter: 'x'."), sdk.CategoryBadRequest},
	} {
		e := classify(c.status, http.Header{"Retry-After-Ms": {"1500"}}, c.body)
		if e.Category != c.want || e.RetryAfter != 1500*time.Millisecond {
			t.Errorf("%d %s: %+v, want %s", c.status, c.body, e, c.want)
		}
	}
}

func TestEncryptedIncludeOnlyForReasoningModels(t *testing.T) {
	msgs := []sdk.Message{{Role: sdk.RoleUser, Content: []sdk.ContentPart{{Type: "text", Text: "hi"}}}}
	for model, want := range map[string]bool{"gpt-4.1": false, "gpt-5": true, "o4-mini": true, "openai/gpt-5-codex": true} {
		r, err := buildRequest(sdk.Endpoint{}, sdk.Request{Model: model, Messages: msgs}, true)
		if err != nil || (len(r.Include) > 0) != want || r.Store {
			t.Errorf("%s: include %v store %v err %v", model, r.Include, r.Store, err)
		}
	}
	r, _ := buildRequest(sdk.Endpoint{Options: map[string]string{OptionEncryptedReasoning: "off"}}, sdk.Request{Model: "gpt-5", ReasoningEffort: "low", Messages: msgs}, true)
	if len(r.Include) != 0 || r.Reasoning == nil || r.Reasoning.Effort != "low" {
		t.Fatalf("option off: %+v %+v", r.Include, r.Reasoning)
	}
}
