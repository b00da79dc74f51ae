package responses

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
)

func streamErr(t *testing.T, evs ...string) (*rec, *sdk.Error) {
	t.Helper()
	r := &rec{}
	_, err := readStream(context.Background(), slog.New(slog.DiscardHandler), strings.NewReader(sse(evs...)), r)
	e, ok := err.(*sdk.Error)
	if !ok {
		t.Fatalf("err %T %v", err, err)
	}
	return r, e
}

// Error events in every shape the API and compatible servers send.
func TestErrorEventShapes(t *testing.T) {
	const quota = "You exceeded your current quota, please check your plan and billing details."
	cases := []struct {
		name string
		evs  []string
		cat  sdk.ErrorCategory
		msg  string
	}{
		{"nested, then response.failed", []string{
			`{"type":"error","sequence_number":2,"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"` + quota + `","param":null}}`,
			`{"type":"response.failed","response":{"status":"failed","error":{"code":"insufficient_quota","message":"` + quota + `"}}}`,
		}, sdk.CategoryQuota, quota + " [insufficient_quota]"},
		{"nested, null code, completed by response.failed", []string{
			`{"type":"error","error":{"type":"","code":null,"message":"Rate limit reached for gpt-5 in organization org-x on tokens per min","param":null}}`,
			`{"type":"response.failed","response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached"}}}`,
		}, sdk.CategoryRateLimit, "Rate limit reached for gpt-5 in organization org-x on tokens per min [rate_limit_exceeded]"},
		{"flat, at the end of the stream", []string{
			`{"type":"error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model.","param":"input"}`,
		}, sdk.CategoryContextOverflow, "Your input exceeds the context window"},
		{"flat, null code", []string{
			`{"type":"error","code":null,"message":"The server had an error while processing your request.","param":null}`,
		}, sdk.CategoryServer, "The server had an error while processing your request."},
		{"flat, numeric code, followed by another event", []string{
			`{"type":"error","code":503,"message":"The server is overloaded"}`,
			`{"type":"response.in_progress","response":{"status":"in_progress"}}`,
		}, sdk.CategoryThrottling, "The server is overloaded"},
		{"response.failed alone", []string{
			`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The model failed to generate a response."}}}`,
		}, sdk.CategoryServer, "The model failed to generate a response."},
		{"response.failed without an error", []string{`{"type":"response.failed","response":{"status":"failed"}}`}, sdk.CategoryServer, "without saying why"},
		{"error without anything", []string{`{"type":"error"}`}, sdk.CategoryServer, "without a message"},
		{"unexpected shape", []string{`{"type":"response.output_text.delta","output_index":0,"delta":{"text":"x"}}`}, sdk.CategoryBadResponse, "unexpected stream event"},
		{"unknown client tool item", []string{
			`{"type":"response.output_item.done","output_index":0,"item":{"type":"local_shell_call","id":"ls","call_id":"c","action":{"type":"exec","command":["ls"]}}}`,
		}, sdk.CategoryBadResponse, "local_shell_call"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, e := streamErr(t, c.evs...)
			if e.Category != c.cat || !strings.Contains(e.Message, c.msg) {
				t.Fatalf("%s %q, want %s …%s…", e.Category, e.Message, c.cat, c.msg)
			}
		})
	}
}

func TestRefusalEvents(t *testing.T) {
	r := &rec{}
	reason, err := readStream(context.Background(), slog.New(slog.DiscardHandler), strings.NewReader(sse(
		`{"type":"response.refusal.delta","output_index":0,"content_index":0,"delta":"I can't "}`,
		`{"type":"response.refusal.delta","output_index":0,"content_index":0,"delta":"help with that."}`,
		`{"type":"response.refusal.done","output_index":0,"content_index":0,"refusal":"I can't help with that."}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"m","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}}`,
		`{"type":"response.completed","response":{"model":"m","status":"completed","usage":{"input_tokens":3,"output_tokens":4}}}`,
	)), r)
	if err != nil || reason != sdk.FinishRefusal || r.RefusalOut != "I can't help with that." || r.TextOut.String() != "" {
		t.Fatalf("%v %q refusal %q text %q", err, reason, r.RefusalOut, r.TextOut.String())
	}
}

// output_text.done completes text whose deltas were not all sent.
func TestTextDoneCompletesDeltas(t *testing.T) {
	r := &rec{}
	_, err := readStream(context.Background(), slog.New(slog.DiscardHandler), strings.NewReader(sse(
		`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Hel"}`,
		`{"type":"response.output_text.done","output_index":0,"content_index":0,"text":"Hello"}`,
		`{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"ok"}`,
		`{"type":"response.output_text.done","output_index":1,"content_index":0,"text":"ok"}`,
		`{"type":"response.completed","response":{"model":"m","status":"completed","usage":{"input_tokens":3,"output_tokens":4}}}`,
	)), r)
	if err != nil || r.TextOut.String() != "Hellook" {
		t.Fatalf("%v %q", err, r.TextOut.String())
	}
}
