// Package anthropictest builds Anthropic Messages streams and error bodies
// in the real wire format (named SSE events, block indexes, split JSON,
// signatures, usage) for the scripted HTTP fake openaitest.Server, which
// serves any recorded stream.
package anthropictest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// Event is one server-sent event.
type Event struct {
	Name string
	Data any
}

// Usage is the usage object of message_start.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int64
}

func (u Usage) wire() map[string]any {
	return map[string]any{
		"input_tokens": u.Input, "output_tokens": u.Output,
		"cache_read_input_tokens": u.CacheRead, "cache_creation_input_tokens": u.CacheWrite,
	}
}

// Stream is a 200 response carrying the events, flushed one by one.
func Stream(evs ...[]Event) openaitest.Response {
	var b strings.Builder
	for _, group := range evs {
		for _, e := range group {
			data, _ := json.Marshal(e.Data)
			fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", e.Name, data)
		}
	}
	return openaitest.Response{SSE: true, Body: b.String(), Header: http.Header{"Content-Type": {"text/event-stream"}}}
}

// Start is message_start.
func Start(model string, u Usage) []Event {
	return []Event{{"message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": u.wire(),
	}}}, {"ping", map[string]any{"type": "ping"}}}
}

// Text is a text block at index, streamed in parts.
func Text(index int, parts ...string) []Event {
	evs := []Event{{"content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}}}}
	for _, p := range parts {
		evs = append(evs, Event{"content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": p}}})
	}
	return append(evs, stop(index))
}

// Thinking is a thinking block at index: thinking deltas, then the
// signature in two signature_delta parts.
func Thinking(index int, signature string, parts ...string) []Event {
	evs := []Event{{"content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}}}}
	for _, p := range parts {
		evs = append(evs, Event{"content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "thinking_delta", "thinking": p}}})
	}
	half := len(signature) / 2
	for _, s := range []string{signature[:half], signature[half:]} {
		evs = append(evs, Event{"content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "signature_delta", "signature": s}}})
	}
	return append(evs, stop(index))
}

// Redacted is a redacted_thinking block at index.
func Redacted(index int, data string) []Event {
	return []Event{
		{"content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "redacted_thinking", "data": data}}},
		stop(index),
	}
}

// ToolUse is a tool_use block at index whose input JSON arrives in the
// given (arbitrarily split) parts.
func ToolUse(index int, id, name string, jsonParts ...string) []Event {
	evs := []Event{{"content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}}}}
	for _, p := range jsonParts {
		evs = append(evs, Event{"content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}}})
	}
	return append(evs, stop(index))
}

// End is message_delta (stop reason, cumulative output tokens) and
// message_stop.
func End(stopReason string, output int64) []Event {
	return []Event{
		{"message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stopReason, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": output}}},
		{"message_stop", map[string]any{"type": "message_stop"}},
	}
}

// ErrorEvent is an error event inside a 200 stream.
func ErrorEvent(typ, msg string) []Event {
	return []Event{{"error", map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}}}
}

func stop(index int) Event {
	return Event{"content_block_stop", map[string]any{"type": "content_block_stop", "index": index}}
}

// Error is an HTTP error response with Anthropic's error body.
func Error(status int, typ, msg string, header http.Header) openaitest.Response {
	body, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
	return openaitest.Response{Status: status, Body: string(body), Header: header}
}

// Message is a non-streaming Messages response with one text block.
func Message(model, text, stopReason string, u Usage) openaitest.Response {
	body, _ := json.Marshal(map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "model": model,
		"content": []any{map[string]any{"type": "text", "text": text}}, "stop_reason": stopReason, "usage": u.wire(),
	})
	return openaitest.Response{Body: string(body)}
}
