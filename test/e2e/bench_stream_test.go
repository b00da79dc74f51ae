package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// timing is one measured reply: time to the first text and to the whole
// text at the client, from the moment the request was sent.
type timing struct{ first, whole time.Duration }

// readDirect is the floor: the same kind of Go client reads the provider's
// stream itself, decoding every chunk.
func readDirect(ctx context.Context, baseURL string) (timing, string, error) {
	body := `{"model":"bench","stream":true,"messages":[{"role":"user","content":"go"}]}`
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return timing{}, "", err
	}
	defer resp.Body.Close()
	var t timing
	var text strings.Builder
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return t, text.String(), fmt.Errorf("stream ended without [DONE]: %w", err)
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			t.whole = time.Since(start)
			io.Copy(io.Discard, br) // the connection is reused, as the kernel's is
			return t, text.String(), nil
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &c); err != nil {
			return t, text.String(), err
		}
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
			if text.Len() == 0 {
				t.first = time.Since(start)
				traceMark("direct-first")
			}
			text.WriteString(c.Choices[0].Delta.Content)
		}
	}
}

// benchEvent is the part of a sessionEvents event the benchmark clients read.
type benchEvent struct {
	Type    string
	Delta   *string
	Message *struct{ Role, Text string }
	Payload json.RawMessage
}

// benchSubscription is raw: the benchmark clients read events off the
// wire themselves (WebSocket and SSE) to time them.
const benchSubscription = `subscription($s: ID!) { sessionEvents(sessionId: $s) { seq type delta message { role text } } }`

// streamClient carries the benchmarks' subscriptions (WebSocket and SSE),
// which hold their connections for good. Made from http.DefaultClient's
// pool, a subscription takes the connection the mutations left idle, and
// the next mutation pays for a new one (a TCP handshake and a new server
// goroutine, ~0.5 ms of every graphql-ws first delta here); a real client
// keeps its mutation connection, as the direct read keeps its connection
// to the provider.
var streamClient = &http.Client{Transport: &tokenTransport{tokens: kernelTokens.tokens, mu: kernelTokens.mu, base: http.DefaultTransport.(*http.Transport).Clone()}}

// wsSub is a minimal graphql-transport-ws client: one socket, one subscription.
type wsSub struct{ conn *websocket.Conn }

func dialSub(ctx context.Context, addr, query string, vars map[string]any) (*wsSub, error) {
	conn, _, err := websocket.Dial(ctx, "ws://"+addr+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPClient: streamClient})
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(64 << 20)
	s := &wsSub{conn: conn}
	if err := s.write(ctx, map[string]any{"type": "connection_init", "payload": map[string]any{}}); err != nil {
		return nil, err
	}
	for {
		var m struct{ Type string }
		_, raw, err := conn.Read(ctx)
		if err != nil {
			return nil, err
		}
		if json.Unmarshal(raw, &m); m.Type == "connection_ack" {
			break
		}
	}
	if err := s.write(ctx, map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}}); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *wsSub) write(ctx context.Context, v any) error {
	raw, _ := json.Marshal(v)
	return s.conn.Write(ctx, websocket.MessageText, raw)
}

// next returns the next sessionEvents event.
func (s *wsSub) next(ctx context.Context) (benchEvent, error) {
	for {
		_, raw, err := s.conn.Read(ctx)
		if err != nil {
			return benchEvent{}, err
		}
		var m struct {
			Type    string
			Payload struct {
				Data struct{ SessionEvents benchEvent }
			}
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return benchEvent{}, err
		}
		switch m.Type {
		case "next":
			return m.Payload.Data.SessionEvents, nil
		case "ping":
			if err := s.write(ctx, map[string]any{"type": "pong"}); err != nil {
				return benchEvent{}, err
			}
		case "error", "complete":
			return benchEvent{}, fmt.Errorf("subscription ended: %s", raw)
		}
	}
}

func (s *wsSub) close() { s.conn.Close(websocket.StatusNormalClosure, "") }

// sseSub is a minimal GraphQL-over-SSE client.
type sseSub struct {
	resp *http.Response
	br   *bufio.Reader
}

func dialSSE(ctx context.Context, addr, query string, vars map[string]any) (*sseSub, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := streamClient.Do(req)
	if err != nil {
		return nil, err
	}
	return &sseSub{resp: resp, br: bufio.NewReaderSize(resp.Body, 64<<10)}, nil
}

func (s *sseSub) next(context.Context) (benchEvent, error) {
	for {
		line, err := s.br.ReadSlice('\n')
		if err != nil {
			return benchEvent{}, err
		}
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		var m struct {
			Data struct{ SessionEvents benchEvent }
		}
		if err := json.Unmarshal(bytes.TrimSpace(data), &m); err != nil {
			return benchEvent{}, err
		}
		return m.Data.SessionEvents, nil
	}
}

func (s *sseSub) close() { s.resp.Body.Close() }

type eventSource interface {
	next(context.Context) (benchEvent, error)
}

// viaKernel sends a message and reads the reply from an already open
// subscription: time to the first delta and to the whole text.
func viaKernel(ctx context.Context, k *kernelProc, tb testing.TB, sid string, sub eventSource, want string) (timing, error) {
	start := time.Now()
	k.sendMessage(tb, sid, "go")
	var t timing
	var text strings.Builder
	for {
		ev, err := sub.next(ctx)
		if err != nil {
			return t, err
		}
		switch ev.Type {
		case "message_delta":
			if ev.Delta == nil {
				continue
			}
			if text.Len() == 0 {
				t.first = time.Since(start)
				traceMark("first")
			}
			text.WriteString(*ev.Delta)
			if text.Len() == len(want) {
				t.whole = time.Since(start)
			}
		case "message_end":
			if ev.Message == nil || ev.Message.Role != "ASSISTANT" {
				continue
			}
			if t.whole == 0 {
				t.whole = time.Since(start)
			}
			if want == "" {
				continue
			}
			if ev.Message.Text != want {
				return t, fmt.Errorf("message_end text differs from the stream")
			}
			if text.String() != want {
				return t, fmt.Errorf("deltas lost: %d of %d bytes arrived", text.Len(), len(want))
			}
		case "turn_finished":
			return t, nil
		}
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mapTimings(ts []timing, f func(timing) time.Duration) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = f(t)
	}
	return out
}
