// Package responsestest builds OpenAI Responses API streams and bodies in
// the real wire format (typed SSE events with sequence numbers, output
// indexes, split argument JSON, encrypted reasoning items, usage) for the
// scripted HTTP fake openaitest.Server.
package responsestest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// Event is one typed stream event (its "type" is added).
type Event struct {
	Type string
	Data map[string]any
}

// Usage is a usage object.
type Usage struct {
	Input, Cached, Output int64
}

func (u Usage) wire() map[string]any {
	return map[string]any{
		"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.Cached},
		"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": u.Input + u.Output,
	}
}

// Stream is a 200 response with the events, each with event: and data:
// lines and a sequence_number, flushed one by one.
func Stream(groups ...[]Event) openaitest.Response {
	var b strings.Builder
	seq := 0
	for _, g := range groups {
		for _, e := range g {
			d := map[string]any{"type": e.Type, "sequence_number": seq}
			for k, v := range e.Data {
				d[k] = v
			}
			seq++
			raw, _ := json.Marshal(d)
			fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", e.Type, raw)
		}
	}
	return openaitest.Response{SSE: true, Body: b.String(), Header: http.Header{"Content-Type": {"text/event-stream"}}}
}

func resp(model, status string, output []any, u *Usage) map[string]any {
	r := map[string]any{"id": "resp_test", "object": "response", "model": model, "status": status, "output": output, "store": false}
	if u != nil {
		r["usage"] = u.wire()
	}
	return r
}

// Created is response.created and response.in_progress.
func Created(model string) []Event {
	return []Event{
		{"response.created", map[string]any{"response": resp(model, "in_progress", []any{}, nil)}},
		{"response.in_progress", map[string]any{"response": resp(model, "in_progress", []any{}, nil)}},
	}
}

// Reasoning is a reasoning item at index with summary parts streamed as
// deltas; done carries encrypted_content.
func Reasoning(index int, id, encrypted string, summary ...string) []Event {
	evs := []Event{{"response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{"type": "reasoning", "id": id, "summary": []any{}}}}}
	for i, s := range summary {
		evs = append(evs,
			Event{"response.reasoning_summary_part.added", map[string]any{"item_id": id, "output_index": index, "summary_index": i, "part": map[string]any{"type": "summary_text", "text": ""}}},
			Event{"response.reasoning_summary_text.delta", map[string]any{"item_id": id, "output_index": index, "summary_index": i, "delta": s}},
			Event{"response.reasoning_summary_text.done", map[string]any{"item_id": id, "output_index": index, "summary_index": i, "text": s}},
			Event{"response.reasoning_summary_part.done", map[string]any{"item_id": id, "output_index": index, "summary_index": i, "part": map[string]any{"type": "summary_text", "text": s}}},
		)
	}
	return append(evs, Event{"response.output_item.done", map[string]any{"output_index": index, "item": ReasoningItem(id, encrypted, summary...)}})
}

// ReasoningItem is the complete reasoning item as output_item.done has it.
func ReasoningItem(id, encrypted string, summary ...string) map[string]any {
	parts := []any{}
	for _, s := range summary {
		parts = append(parts, map[string]any{"type": "summary_text", "text": s})
	}
	return map[string]any{"type": "reasoning", "id": id, "summary": parts, "encrypted_content": encrypted}
}

// Message is an assistant message item at index with text deltas.
func Message(index int, id string, parts ...string) []Event {
	evs := []Event{
		{"response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{"type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []any{}}}},
		{"response.content_part.added", map[string]any{"item_id": id, "output_index": index, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}},
	}
	for _, p := range parts {
		evs = append(evs, Event{"response.output_text.delta", map[string]any{"item_id": id, "output_index": index, "content_index": 0, "delta": p}})
	}
	text := strings.Join(parts, "")
	return append(evs,
		Event{"response.output_text.done", map[string]any{"item_id": id, "output_index": index, "content_index": 0, "text": text}},
		Event{"response.content_part.done", map[string]any{"item_id": id, "output_index": index, "content_index": 0, "part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}},
		Event{"response.output_item.done", map[string]any{"output_index": index, "item": map[string]any{"type": "message", "id": id, "role": "assistant", "status": "completed", "content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}}},
	)
}

// FunctionCall is a function_call item at index whose arguments arrive in
// the given split parts.
func FunctionCall(index int, id, callID, name string, argParts ...string) []Event {
	evs := []Event{{"response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{"type": "function_call", "id": id, "call_id": callID, "name": name, "arguments": "", "status": "in_progress"}}}}
	for _, p := range argParts {
		evs = append(evs, Event{"response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": index, "delta": p}})
	}
	args := strings.Join(argParts, "")
	return append(evs,
		Event{"response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": index, "arguments": args}},
		Event{"response.output_item.done", map[string]any{"output_index": index, "item": map[string]any{"type": "function_call", "id": id, "call_id": callID, "name": name, "arguments": args, "status": "completed"}}},
	)
}

// Completed is response.completed with usage.
func Completed(model string, u Usage) []Event {
	return []Event{{"response.completed", map[string]any{"response": resp(model, "completed", []any{}, &u)}}}
}

// Failed is response.failed with an error object.
func Failed(model, code, msg string) []Event {
	r := resp(model, "failed", []any{}, nil)
	r["error"] = map[string]any{"code": code, "message": msg}
	return []Event{{"response.failed", map[string]any{"response": r}}}
}

// Error is an HTTP error with OpenAI's error body.
func Error(status int, typ, code, msg string, header http.Header) openaitest.Response {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code, "param": nil}})
	return openaitest.Response{Status: status, Body: string(body), Header: header}
}

// Compacted is a /responses/compact answer: the given items (user messages
// kept, then an encrypted compaction item).
func Compacted(model string, items []any, u Usage) openaitest.Response {
	body, _ := json.Marshal(map[string]any{"id": "cmp_test", "object": "response.compaction", "model": model, "created_at": 1764500000, "output": items, "usage": u.wire()})
	return openaitest.Response{Body: string(body)}
}
