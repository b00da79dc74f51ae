package edge_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foya-dev/foya/edge"
)

// rawWS is a graphql-transport-ws socket driven message by message.
type rawWS struct {
	t    *testing.T
	conn *websocket.Conn
}

func dialRaw(t *testing.T, ctx context.Context, url string, subprotocols ...string) *rawWS {
	t.Helper()
	if subprotocols == nil {
		subprotocols = []string{"graphql-transport-ws"}
	}
	conn, resp, err := websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1)+"/graphql", &websocket.DialOptions{Subprotocols: subprotocols})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != subprotocols[0] {
		t.Fatalf("subprotocol %q, want %q", got, subprotocols[0])
	}
	t.Cleanup(func() { conn.CloseNow() })
	return &rawWS{t: t, conn: conn}
}

func (w *rawWS) sendRaw(ctx context.Context, s string) {
	w.t.Helper()
	if err := w.conn.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		w.t.Fatalf("write %s: %v", s, err)
	}
}

// next reads one message (pings included).
func (w *rawWS) next(ctx context.Context) wsMessage {
	w.t.Helper()
	_, raw, err := w.conn.Read(ctx)
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	var m wsMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		w.t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

// expect reads until a message of type typ (skipping server pings).
func (w *rawWS) expect(ctx context.Context, typ string) wsMessage {
	w.t.Helper()
	for {
		m := w.next(ctx)
		if m.Type == typ {
			return m
		}
		if m.Type != "ping" {
			w.t.Fatalf("got %s %s, want %s", m.Type, m.Payload, typ)
		}
	}
}

// closed reads until the socket closes and checks its close code and reason.
func (w *rawWS) closed(ctx context.Context, code websocket.StatusCode, reason string) {
	w.t.Helper()
	for {
		_, raw, err := w.conn.Read(ctx)
		if err == nil {
			if !strings.Contains(string(raw), `"ping"`) {
				w.t.Logf("message before close: %s", raw)
			}
			continue
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != code || !strings.Contains(ce.Reason, reason) {
			w.t.Fatalf("want close %d %q, got %v", code, reason, err)
		}
		return
	}
}

func (w *rawWS) init(ctx context.Context) {
	w.t.Helper()
	w.sendRaw(ctx, `{"type":"connection_init"}`)
	w.expect(ctx, "connection_ack")
}

// Every message type and close code of graphql-transport-ws
// (enisdenjo/graphql-ws PROTOCOL.md), with a raw socket.
func TestGraphQLTransportWSProtocol(t *testing.T) {
	k := newTestKernel(t, func(c *edge.Config) {
		c.KeepAlive = 300 * time.Millisecond
		c.WSInitTimeout = 700 * time.Millisecond
	})
	base := k.srv.URL
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	t.Run("ping before connection_init, pong with its payload", func(t *testing.T) {
		w := dialRaw(t, ctx, base)
		w.sendRaw(ctx, `{"type":"ping","payload":{"n":1}}`)
		m := w.expect(ctx, "pong")
		if string(m.Payload) != `{"n":1}` {
			t.Fatalf("pong payload %s", m.Payload)
		}
		w.sendRaw(ctx, `{"type":"pong"}`) // a unidirectional heartbeat: no answer, no close
		w.init(ctx)
	})
	t.Run("server ping at the interval, answered with pong keeps the socket", func(t *testing.T) {
		w := dialRaw(t, ctx, base)
		w.init(ctx)
		for i := 0; i < 4; i++ {
			if m := w.next(ctx); m.Type != "ping" {
				t.Fatalf("got %s, want ping", m.Type)
			}
			w.sendRaw(ctx, `{"type":"pong"}`)
		}
		w.sendRaw(ctx, `{"type":"ping"}`)
		w.expect(ctx, "pong")
	})
	t.Run("no pong: closed as gone", func(t *testing.T) {
		w := dialRaw(t, ctx, base)
		w.init(ctx)
		w.closed(ctx, websocket.StatusGoingAway, "no pong")
	})
	t.Run("4408 without connection_init", func(t *testing.T) {
		w := dialRaw(t, ctx, base)
		start := time.Now()
		w.closed(ctx, 4408, "Connection initialisation timeout")
		if d := time.Since(start); d < 600*time.Millisecond || d > 5*time.Second {
			t.Fatalf("closed after %v, want the init timeout", d)
		}
	})
	t.Run("4429 on a second connection_init", func(t *testing.T) {
		w := dialRaw(t, ctx, base)
		w.init(ctx)
		w.sendRaw(ctx, `{"type":"connection_init"}`)
		w.closed(ctx, 4429, "Too many initialisation requests")
	})
	t.Run("4401 subscribe before the ack", func(t *testing.T) {
		w := dialRaw(t, ctx, base)
		w.sendRaw(ctx, `{"id":"1","type":"subscribe","payload":{"query":"{ __typename }"}}`)
		w.closed(ctx, 4401, "Unauthorized")
	})
	for name, msg := range map[string]string{
		"unknown type":       `{"type":"start","id":"1","payload":{"query":"{ __typename }"}}`,
		"no type":            `{"id":"1"}`,
		"not JSON":           `hello`,
		"a JSON array":       `[1]`,
		"subscribe no id":    `{"type":"subscribe","payload":{"query":"{ __typename }"}}`,
		"subscribe empty id": `{"type":"subscribe","id":"","payload":{"query":"{ __typename }"}}`,
		"subscribe no query": `{"type":"subscribe","id":"1","payload":{}}`,
		"complete no id":     `{"type":"complete"}`,
		"numeric id":         `{"type":"complete","id":1}`,
		"server type next":   `{"type":"next","id":"1","payload":{}}`,
		"ping payload array": `{"type":"ping","payload":[1]}`,
	} {
		t.Run("4400 "+name, func(t *testing.T) {
			w := dialRaw(t, ctx, base)
			w.init(ctx)
			w.sendRaw(ctx, msg)
			w.closed(ctx, 4400, "Invalid message")
		})
	}
	t.Run("4409 duplicate subscriber id", func(t *testing.T) {
		w := dialRaw(t, ctx, base)
		w.init(ctx)
		w.sendRaw(ctx, `{"id":"s","type":"subscribe","payload":{"query":"subscription { kernelEvents { type } }"}}`)
		w.sendRaw(ctx, `{"id":"s","type":"subscribe","payload":{"query":"subscription { kernelEvents { type } }"}}`)
		w.closed(ctx, 4409, "Subscriber for s already exists")
	})
	t.Run("error for validation, next+complete for a query, id reusable", func(t *testing.T) {
		w := dialRaw(t, ctx, base)
		w.init(ctx)
		w.sendRaw(ctx, `{"id":"a","type":"subscribe","payload":{"query":"subscription { noSuchField }"}}`)
		m := w.expect(ctx, "error")
		var errs []struct {
			Message    string
			Extensions map[string]any
		}
		if m.ID != "a" || json.Unmarshal(m.Payload, &errs) != nil || len(errs) == 0 || errs[0].Extensions["code"] == nil {
			t.Fatalf("error message %s %s", m.ID, m.Payload)
		}
		w.sendRaw(ctx, `{"id":"b","type":"subscribe","payload":{"query":"{ __typename"}}`) // parse error
		if m := w.expect(ctx, "error"); m.ID != "b" {
			t.Fatalf("parse error for %q", m.ID)
		}
		w.sendRaw(ctx, `{"id":"a","type":"subscribe","payload":{"query":"query($n: Int!) { __typename }","variables":{"n":"x"}}}`)
		if m := w.expect(ctx, "error"); m.ID != "a" {
			t.Fatalf("variables error for %q", m.ID)
		}
		// The id of an operation that ended is free again.
		w.sendRaw(ctx, `{"id":"a","type":"subscribe","payload":{"query":"{ __typename }"}}`)
		if m := w.expect(ctx, "next"); m.ID != "a" || !strings.Contains(string(m.Payload), `"__typename":"Query"`) {
			t.Fatalf("next %s %s", m.ID, m.Payload)
		}
		if m := w.expect(ctx, "complete"); m.ID != "a" {
			t.Fatalf("complete for %q", m.ID)
		}
	})
	t.Run("client complete stops a stream, its id is free", func(t *testing.T) {
		w := dialRaw(t, ctx, base)
		w.init(ctx)
		w.sendRaw(ctx, `{"id":"s","type":"subscribe","payload":{"query":"subscription { kernelEvents { type } }"}}`)
		w.sendRaw(ctx, `{"id":"s","type":"complete"}`)
		w.sendRaw(ctx, `{"id":"s","type":"subscribe","payload":{"query":"{ __typename }"}}`)
		w.expect(ctx, "next")
		w.expect(ctx, "complete")
		w.sendRaw(ctx, `{"id":"nobody","type":"complete"}`) // unknown id: ignored
		w.sendRaw(ctx, `{"type":"ping"}`)
		w.expect(ctx, "pong")
	})
	t.Run("normal closure by the client", func(t *testing.T) {
		w := dialRaw(t, ctx, base)
		w.init(ctx)
		if err := w.conn.Close(websocket.StatusNormalClosure, ""); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("legacy graphql-ws stays gqlgen's", func(t *testing.T) {
		w := dialRaw(t, ctx, base, "graphql-ws")
		w.sendRaw(ctx, `{"type":"connection_init"}`)
		if m := w.next(ctx); m.Type != "connection_ack" {
			t.Fatalf("got %s", m.Type)
		}
		w.sendRaw(ctx, `{"id":"1","type":"start","payload":{"query":"{ __typename }"}}`)
		for {
			m := w.next(ctx)
			if m.Type == "ka" {
				continue
			}
			if m.Type != "data" || m.ID != "1" {
				t.Fatalf("got %s %s", m.Type, m.Payload)
			}
			break
		}
	})
}
