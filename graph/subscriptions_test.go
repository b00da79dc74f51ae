package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/core/session"
)

// wsClient speaks graphql-transport-ws, the protocol of the npm graphql-ws client.
type wsClient struct {
	t    testing.TB
	conn *websocket.Conn
	msgs chan wsMessage // filled by a reader goroutine that answers pings
	errc chan error
}

func dialWS(t testing.TB, ctx context.Context, url string) *wsClient {
	t.Helper()
	conn, resp, err := websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1)+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	if resp.Header.Get("Sec-WebSocket-Protocol") != "graphql-transport-ws" {
		t.Fatalf("subprotocol = %q", resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	conn.SetReadLimit(1 << 22)
	c := &wsClient{t: t, conn: conn, msgs: make(chan wsMessage, 1024), errc: make(chan error, 1)}
	go c.pump(ctx)
	c.send(ctx, map[string]any{"type": "connection_init", "payload": map[string]any{}})
	if m := c.read(ctx); m.Type != "connection_ack" {
		t.Fatalf("first message %+v, want connection_ack", m)
	}
	return c
}

func (c *wsClient) send(ctx context.Context, v any) {
	raw, _ := json.Marshal(v)
	if err := c.conn.Write(ctx, websocket.MessageText, raw); err != nil {
		c.t.Fatalf("ws write: %v", err)
	}
}

// pump reads protocol messages, answering pings.
func (c *wsClient) pump(ctx context.Context) {
	for {
		_, raw, err := c.conn.Read(ctx)
		if err != nil {
			c.errc <- err
			return
		}
		var m wsMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			c.errc <- fmt.Errorf("decode %s: %w", raw, err)
			return
		}
		if m.Type == "ping" {
			raw, _ := json.Marshal(map[string]any{"type": "pong"})
			if err := c.conn.Write(ctx, websocket.MessageText, raw); err != nil {
				c.errc <- err
				return
			}
			continue
		}
		c.msgs <- m
	}
}

// read returns the next protocol message.
func (c *wsClient) read(ctx context.Context) wsMessage {
	select {
	case m := <-c.msgs:
		return m
	case err := <-c.errc:
		c.t.Fatalf("ws read: %v", err)
	case <-ctx.Done():
		c.t.Helper()
		c.t.Fatalf("ws read: %v", ctx.Err())
	}
	return wsMessage{}
}

// readPoking returns the next message of subscription id, calling poke
// until one arrives: a subscription has no "started" acknowledgement, so a
// test that needs it live keeps causing events until one is seen.
func (c *wsClient) readPoking(ctx context.Context, id string, poke func()) wsMessage {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	poke()
	for {
		select {
		case m := <-c.msgs:
			if m.ID == id {
				return m
			}
		case err := <-c.errc:
			c.t.Fatalf("ws read: %v", err)
		case <-tick.C:
			poke()
		case <-ctx.Done():
			c.t.Fatalf("no message for subscription %s: %v", id, ctx.Err())
		}
	}
}

func (c *wsClient) subscribe(ctx context.Context, id, query string, vars map[string]any) {
	c.send(ctx, map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}})
}

// nextEvent reads the next sessionEvents payload of subscription id.
func (c *wsClient) nextEvent(ctx context.Context) eventJSON {
	m := c.read(ctx)
	if m.Type != "next" {
		c.t.Fatalf("message %s %s, want next", m.Type, m.Payload)
	}
	var p struct {
		Data struct {
			SessionEvents eventJSON `json:"sessionEvents"`
		} `json:"data"`
		Errors []gqlError `json:"errors"`
	}
	if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
		c.t.Fatalf("next payload %s: %v", m.Payload, err)
	}
	return p.Data.SessionEvents
}

// appendConcurrently writes n messages (and a delta after each) while a
// subscriber is switching from replay to live.
func appendConcurrently(t *testing.T, svc *session.Service, sid string, n int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			if _, err := svc.Append(context.Background(), sid, coretest.MessageEvent(t, sid, core.RoleUser, fmt.Sprintf("live %d", i))); err != nil {
				t.Errorf("append: %v", err)
				return
			}
			svc.Emit(sid, core.EventMessageDelta, core.DeltaPayload{Text: "d"})
		}
	}()
	return done
}

// checkContiguous reads events until seq want arrives and checks seqs 1..want
// each arrive exactly once and in order.
func checkContiguous(t *testing.T, want int64, next func() eventJSON) (deltas int) {
	t.Helper()
	var last int64
	for last < want {
		ev := next()
		if ev.Seq == nil {
			if ev.Type != "message_delta" {
				t.Fatalf("live-only event %+v", ev)
			}
			deltas++
			continue
		}
		if *ev.Seq != last+1 {
			t.Fatalf("got seq %d after %d: gap or duplicate", *ev.Seq, last)
		}
		if ev.Type == "message_end" && (ev.Message == nil || ev.Message.Seq != *ev.Seq) {
			t.Fatalf("message_end without its message: %+v", ev)
		}
		last = *ev.Seq
	}
	return deltas
}

func seedSession(t *testing.T, k *testKernel, n int) string {
	t.Helper()
	s, err := k.svc.CreateSession(context.Background(), core.CreateSessionInput{})
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]core.Event, n)
	for i := range batch {
		batch[i] = coretest.MessageEvent(t, s.ID, core.RoleUser, fmt.Sprintf("old %d", i))
	}
	if _, err := k.svc.Append(context.Background(), s.ID, batch...); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

func TestSessionEventsOverWebSocket(t *testing.T) {
	k := newTestKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sid := seedSession(t, k, 100)

	c := dialWS(t, ctx, k.srv.URL)
	defer c.conn.Close(websocket.StatusNormalClosure, "")
	done := appendConcurrently(t, k.svc, sid, 300)
	defer func() { <-done }()
	c.subscribe(ctx, "1", subscribeEvents, map[string]any{"id": sid, "after": 0})
	checkContiguous(t, 401, func() eventJSON { return c.nextEvent(ctx) })
	<-done

	// Live only (no afterSeq): starts after the current head.
	c.subscribe(ctx, "2", subscribeEvents, map[string]any{"id": sid})
	m := c.readPoking(ctx, "2", func() {
		if _, err := k.svc.Append(ctx, sid, coretest.MessageEvent(t, sid, core.RoleUser, "after")); err != nil {
			t.Error(err)
		}
	})
	var first struct {
		Data struct{ SessionEvents eventJSON } `json:"data"`
	}
	if err := json.Unmarshal(m.Payload, &first); err != nil || first.Data.SessionEvents.Seq == nil || *first.Data.SessionEvents.Seq <= 401 {
		t.Fatalf("live-only subscription replayed history: %s", m.Payload)
	}

	// Unknown session: an error message, with the code.
	c.subscribe(ctx, "3", subscribeEvents, map[string]any{"id": "ses_nope"})
	for {
		m := c.read(ctx)
		if m.ID != "3" {
			continue
		}
		if m.Type != "error" && !bytes.Contains(m.Payload, []byte("NOT_FOUND")) {
			t.Fatalf("unknown session: %s %s", m.Type, m.Payload)
		}
		break
	}
}

func TestSessionEventsOverSSE(t *testing.T) {
	k := newTestKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sid := seedSession(t, k, 100)

	body, _ := json.Marshal(map[string]any{"query": subscribeEvents, "variables": map[string]any{"id": sid, "after": 0}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, k.srv.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	done := appendConcurrently(t, k.svc, sid, 300)
	defer func() { <-done }()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	next := func() eventJSON {
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "data: ") {
				continue
			}
			var p struct {
				Data struct {
					SessionEvents eventJSON `json:"sessionEvents"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &p); err != nil {
				t.Fatalf("sse data %s: %v", line, err)
			}
			return p.Data.SessionEvents
		}
		t.Fatalf("sse stream ended: %v", sc.Err())
		return eventJSON{}
	}
	checkContiguous(t, 401, next)
	<-done
}

func TestKernelEventsOverWebSocket(t *testing.T) {
	k := newTestKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dialWS(t, ctx, k.srv.URL)
	defer c.conn.Close(websocket.StatusNormalClosure, "")
	c.subscribe(ctx, "k", `subscription { kernelEvents { type sessionId session { id title } } }`, nil)
	c.readPoking(ctx, "k", func() { k.mustDo(t, `mutation { createSession(input: {title: "probe"}) { id } }`, nil, nil) })

	// Each change waits for its event: KernelEvent.session is read when the
	// event is delivered, so a session deleted meanwhile would be null.
	var created struct{ CreateSession struct{ ID string } }
	var types []string
	for _, want := range []string{"session_created", "session_updated", "session_deleted"} {
		switch want {
		case "session_created":
			k.mustDo(t, `mutation { createSession(input: {title: "watched"}) { id } }`, nil, &created)
		case "session_updated":
			k.mustDo(t, `mutation($id: ID!) { updateSession(id: $id, input: {title: "renamed"}) { id } }`, map[string]any{"id": created.CreateSession.ID}, nil)
		case "session_deleted":
			k.mustDo(t, `mutation($id: ID!) { deleteSession(id: $id) }`, map[string]any{"id": created.CreateSession.ID}, nil)
		}
		m := c.read(ctx)
		for !bytes.Contains(m.Payload, []byte(created.CreateSession.ID)) {
			m = c.read(ctx) // a probe's event
		}
		var p struct {
			Data struct {
				KernelEvents struct {
					Type      string
					SessionID string
					Session   *struct{ ID, Title string }
				}
			}
		}
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			t.Fatal(err)
		}
		ev := p.Data.KernelEvents
		types = append(types, ev.Type)
		if ev.Type != want || ev.SessionID != created.CreateSession.ID {
			t.Fatalf("kernel events %v, want %s", types, want)
		}
		if (want == "session_deleted") != (ev.Session == nil) {
			t.Fatalf("%s session = %+v", want, ev.Session)
		}
	}
}

// TestKernelEventsReady subscribes with ready: the first event is
// subscribed, and a session created right after it is the next event (no
// change made after subscribed is missed, so no poking is needed); ids an
// event does not name are null.
func TestKernelEventsReady(t *testing.T) {
	k := newTestKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dialWS(t, ctx, k.srv.URL)
	defer c.conn.Close(websocket.StatusNormalClosure, "")
	type kernelEvent struct {
		Type         string
		SessionID    *string
		ConnectionID *string
		Session      *struct{ ID, Title string }
		At           string
	}
	// next reads the next event of subscription id (an earlier round's
	// subscription may still deliver until its complete is handled).
	next := func(id string) kernelEvent {
		for {
			m := c.read(ctx)
			if m.ID != id {
				continue
			}
			var p struct {
				Data struct{ KernelEvents kernelEvent }
			}
			if err := json.Unmarshal(m.Payload, &p); err != nil {
				t.Fatalf("%s: %v", m.Payload, err)
			}
			return p.Data.KernelEvents
		}
	}
	for round := range 20 {
		id := fmt.Sprint("k", round)
		c.subscribe(ctx, id, `subscription { kernelEvents(ready: true) { type sessionId connectionId session { id title } at } }`, nil)
		first := next(id)
		if first.Type != "subscribed" || first.SessionID != nil || first.ConnectionID != nil || first.Session != nil || first.At == "" {
			t.Fatalf("round %d: first event %+v, want subscribed without a session", round, first)
		}
		var created struct{ CreateSession struct{ ID string } }
		k.mustDo(t, `mutation { createSession(input: {title: "right after"}) { id } }`, nil, &created)
		ev := next(id)
		if ev.Type != "session_created" || ev.SessionID == nil || *ev.SessionID != created.CreateSession.ID {
			t.Fatalf("round %d: next event %+v, want session_created of %s", round, ev, created.CreateSession.ID)
		}
		if round == 0 {
			// A catalog change names its connection and no session: the
			// ids that are not set are null.
			conn := k.createConn(t, map[string]any{"name": "watched", "baseUrl": "http://127.0.0.1:9/v1", "models": []any{map[string]any{"id": "m"}}})
			ev := next(id)
			if ev.Type != "catalog_updated" || ev.SessionID != nil || ev.Session != nil || ev.ConnectionID == nil || *ev.ConnectionID != conn.ID {
				t.Fatalf("after a new connection: %+v, want catalog_updated of %s without a session", ev, conn.ID)
			}
		}
		c.send(ctx, map[string]any{"id": id, "type": "complete"})
	}
}
