// Package openaitest is a scripted fake of an OpenAI-compatible endpoint for
// tests: queue responses (SSE streams, JSON bodies, errors, dropped
// connections, hanging streams) and inspect the requests it received. It
// speaks the real wire format, so provider and turn-engine tests share it.
package openaitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Response is one scripted answer.
type Response struct {
	Status int         // default 200
	Header http.Header // extra headers, e.g. Retry-After
	// Body is written as is (a JSON document, or a raw recorded SSE stream
	// when SSE is set; events are flushed one by one).
	Body string
	// Events are SSE data payloads written as "data: <e>\n\n", flushed one
	// by one; "[DONE]" is appended unless NoDone is set.
	Events []string
	NoDone bool
	SSE    bool
	// Delay is waited before each event.
	Delay time.Duration
	// DropAfter > 0 closes the connection abruptly after that many events.
	DropAfter int
	// Hang keeps the response open after the events (no [DONE]) until the
	// client goes away; the server then reports the cancellation on Cancelled.
	Hang bool
	// Gate, when set, holds the stream after its first GateAfter events
	// until Gate is closed (or the client goes away), so that a test sees
	// a reply half-way whatever the machine's pace.
	Gate      <-chan struct{}
	GateAfter int
}

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// JSON decodes the request body into a generic map.
func (r Request) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Server is the fake endpoint. URL + "/v1" is the connection's base URL.
type Server struct {
	*httptest.Server
	mu        sync.Mutex
	queue     []Response
	requests  []Request
	cancelled chan struct{}
}

// New starts a fake; it is closed when the test ends.
func New(t interface{ Cleanup(func()) }) *Server {
	s := &Server{cancelled: make(chan struct{}, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the base URL to configure: the server URL plus /v1.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Enqueue adds responses; each request takes the next one.
func (s *Server) Enqueue(rs ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, rs...)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// LastRequest returns the most recent request, or a zero Request.
func (s *Server) LastRequest() Request {
	rs := s.Requests()
	if len(rs) == 0 {
		return Request{}
	}
	return rs[len(rs)-1]
}

// Cancelled receives once per hanging response whose client went away.
func (s *Server) Cancelled() <-chan struct{} { return s.cancelled }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	resp := s.next(Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	events := streamFrames(resp)
	if len(events) == 0 && !resp.Hang {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, resp.Body)
		return
	}
	s.stream(w, r, resp, status, events)
}

// next records req and takes the next scripted response (an error reply
// when none is left).
func (s *Server) next(req Request) Response {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	var resp Response
	ok := len(s.queue) > 0
	if ok {
		resp, s.queue = s.queue[0], s.queue[1:]
	}
	s.mu.Unlock()
	if !ok {
		resp = Error(http.StatusInternalServerError, "server_error", "", "openaitest: no scripted response")
	}
	return resp
}

// streamFrames are the server-sent event frames of resp: its raw SSE
// body split into events, or its Events as data lines (with the final
// [DONE] unless the response is cut or hangs). None: a plain reply.
func streamFrames(resp Response) []string {
	events := resp.Events
	if resp.SSE && resp.Body != "" {
		for _, ev := range strings.Split(resp.Body, "\n\n") {
			if strings.TrimSpace(ev) != "" {
				events = append(events, ev+"\n\n")
			}
		}
	} else if len(events) > 0 {
		raw := make([]string, 0, len(events)+1)
		for _, e := range events {
			raw = append(raw, "data: "+e+"\n\n")
		}
		if !resp.NoDone && resp.DropAfter == 0 && !resp.Hang {
			raw = append(raw, "data: [DONE]\n\n")
		}
		events = raw
	}
	return events
}

// stream writes events as a server-sent event stream, with resp's delay,
// drop and hang behaviour.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, resp Response, status int, events []string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	fl, _ := w.(http.Flusher)
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
	}
	flush()
	for i, ev := range events {
		if resp.DropAfter > 0 && i == resp.DropAfter {
			panic(http.ErrAbortHandler) // closes the connection mid-stream
		}
		if resp.Gate != nil && i == resp.GateAfter {
			select {
			case <-resp.Gate:
			case <-r.Context().Done():
				s.reportCancel(resp)
				return
			}
		}
		if resp.Delay > 0 {
			select {
			case <-time.After(resp.Delay):
			case <-r.Context().Done():
				s.reportCancel(resp)
				return
			}
		}
		if _, err := io.WriteString(w, ev); err != nil {
			return
		}
		flush()
	}
	if resp.DropAfter > 0 {
		panic(http.ErrAbortHandler)
	}
	if resp.Hang {
		<-r.Context().Done()
		s.reportCancel(resp)
	}
}

func (s *Server) reportCancel(Response) {
	select {
	case s.cancelled <- struct{}{}:
	default:
	}
}

// WaitCancelled waits until a hanging response saw its client go away.
func (s *Server) WaitCancelled(ctx context.Context) error {
	select {
	case <-s.cancelled:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for cancelled request: %w", ctx.Err())
	}
}

// Error is an error response with an OpenAI-style body.
func Error(status int, typ, code, message string) Response {
	body := map[string]any{"error": map[string]any{"message": message, "type": typ, "code": nilIfEmpty(code)}}
	b, _ := json.Marshal(body)
	return Response{Status: status, Body: string(b)}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Chunk builds one chat.completion.chunk with a single choice delta.
func Chunk(model string, delta map[string]any, finishReason string) string {
	choice := map[string]any{"index": 0, "delta": delta, "finish_reason": nilIfEmpty(finishReason)}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1700000000,
		"model": model, "choices": []any{choice},
	})
	return string(b)
}

// UsageChunk builds the final include_usage chunk (choices: []).
func UsageChunk(model string, prompt, completion, cached int64) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1700000000,
		"model": model, "choices": []any{},
		"usage": map[string]any{
			"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
			"prompt_tokens_details": map[string]any{"cached_tokens": cached},
		},
	})
	return string(b)
}

// TextStream is a complete streamed answer: a role chunk, one chunk per
// part, a stop chunk and a usage chunk.
func TextStream(model string, parts ...string) Response {
	events := []string{Chunk(model, map[string]any{"role": "assistant", "content": ""}, "")}
	for _, p := range parts {
		events = append(events, Chunk(model, map[string]any{"content": p}, ""))
	}
	events = append(events, Chunk(model, map[string]any{}, "stop"), UsageChunk(model, 10, int64(len(parts)), 0))
	return Response{Events: events}
}

// Completion is a non-streamed chat.completion body.
func Completion(model, text, finishReason string, prompt, completion int64) Response {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": finishReason}},
		"usage":   map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
	})
	return Response{Body: string(b)}
}
