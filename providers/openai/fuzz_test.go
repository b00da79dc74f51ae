package openai_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/openai"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// bodyTransport answers every request with 200 text/event-stream and the
// given body, so the fuzzer drives Stream's SSE parser without a socket.
type bodyTransport struct{ body []byte }

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(bytes.NewReader(b.body)),
		Request: r,
	}, nil
}

// sseBody renders events the way openaitest's server writes them.
func sseBody(events ...string) []byte {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: " + e + "\n\n")
	}
	return []byte(b.String())
}

// FuzzStreamSSE feeds arbitrary bytes to Provider.Stream as the body of a
// successful streamed Chat Completions response. Whatever arrives, Stream
// must return (no panic, no hang), every error must be a classified
// *sdk.Error, everything it forwards must be valid UTF-8 (it crosses the
// plugin's gRPC boundary as protobuf strings), and a nil error needs [DONE].
func FuzzStreamSSE(f *testing.F) {
	m := "gpt-test"
	ts := openaitest.TextStream(m, "Hel", "lo")
	f.Add(sseBody(append(ts.Events, "[DONE]")...))
	f.Add(sseBody(
		openaitest.Chunk(m, map[string]any{"reasoning_content": "think"}, ""),
		openaitest.Chunk(m, map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function", "function": map[string]any{"name": "read", "arguments": "{\"pa"}}}}, ""),
		openaitest.Chunk(m, map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": "th\":1}"}}}}, "tool_calls"),
		openaitest.UsageChunk(m, 5, 7, 2), "[DONE]"))
	f.Add(sseBody(openaitest.Chunk(m, map[string]any{"content": "x"}, "length"), "[DONE]"))
	f.Add(sseBody(`{"error":{"message":"This model's maximum context length is 10 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`))
	f.Add([]byte(": keep-alive\r\nevent: message\r\nid: 1\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\r\n\r\ndata: [DONE]"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"\ndata: }}]}\n\ndata:[DONE]\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"\\ud800\xff\"}}]}\n\n"))
	f.Add([]byte("data: not json\n\n"))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, body []byte) {
		p := openai.New(openai.Config{HTTPClient: &http.Client{Transport: bodyTransport{body: body}}})
		rec := &recorder{}
		ep := sdk.Endpoint{ConnectionID: "c", ProviderKind: openai.Kind, BaseURL: "http://fuzz.invalid/v1", APIKey: "sk-fuzz-key"}
		finish, err := p.Stream(context.Background(), ep, sdk.Request{Model: m, Messages: []sdk.Message{{Role: sdk.RoleUser, Content: []sdk.ContentPart{{Type: "text", Text: "hi"}}}}}, rec)
		if err != nil {
			var se *sdk.Error
			if !errors.As(err, &se) {
				t.Fatalf("unclassified error %T: %v", err, err)
			}
			if !utf8.ValidString(se.Message) {
				t.Fatalf("error message is not valid UTF-8: %q", se.Message)
			}
			if finish != "" {
				t.Fatalf("finish reason %q with error %v", finish, err)
			}
		} else {
			if !bytes.Contains(body, []byte("[DONE]")) {
				t.Fatalf("success (finish %q) without [DONE]", finish)
			}
			if finish == "length" {
				t.Fatal(`finish reason "length" must be an output_limit error`)
			}
		}
		if !utf8.ValidString(finish) {
			t.Fatalf("finish reason is not valid UTF-8: %q", finish)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, s := range []string{rec.text.String(), rec.reason.String()} {
			if !utf8.ValidString(s) {
				t.Fatalf("forwarded text is not valid UTF-8: %q", s)
			}
		}
		for i, c := range rec.calls {
			if !utf8.ValidString(c.ID) || !utf8.ValidString(c.Name) || !utf8.ValidString(c.Arguments) {
				t.Fatalf("tool call %d is not valid UTF-8: %+v", i, c)
			}
		}
		for _, u := range rec.usage {
			if !utf8.ValidString(u.Model) {
				t.Fatalf("usage model is not valid UTF-8: %q", u.Model)
			}
		}
	})
}
