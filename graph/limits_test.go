package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/graph"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

func TestErrorsNeverEchoMoreThan200BytesOfInput(t *testing.T) {
	k := newTestKernel(t)
	long := strings.Repeat("Z", 100_000)
	cases := map[string]httpReply{
		"malformed JSON body":   postRaw(t, k, "application/json", strings.NewReader(`{"query": "{ x }", "junk": `+long)),
		"unknown field":         postRaw(t, k, "application/json", strings.NewReader(`{"query": "{ `+long+` }"}`)),
		"bad string literal":    postRaw(t, k, "application/json", strings.NewReader(`{"query": "{ session(id: 5`+long+`) { id } }"}`)),
		"wrong variable type":   postRaw(t, k, "application/json", strings.NewReader(`{"query": "query($n: Int) { events(sessionId: \"x\", limit: $n) { seq } }", "variables": {"n": "`+long+`"}}`)),
		"wrong content type":    postRaw(t, k, "text/plain; charset="+long[:5000], strings.NewReader(`{}`)),
		"unknown session title": postRaw(t, k, "application/json", strings.NewReader(`{"query": "mutation { createSession(input: {title: \"`+long+`\"}) { id } }"}`)),
		"unknown command":       postRaw(t, k, "application/json", strings.NewReader(`{"query": "mutation { sendMessage(sessionId: \"ses_x\", input: {text: \"hi\", command: \"`+long+`\"}) { turnStarted } }"}`)),
	}
	for name, r := range cases {
		e := r.RequireCoded(t, name)
		if strings.Count(string(r.Raw), "Z") > graph.MaxEchoBytes {
			t.Errorf("%s: the response repeats %d bytes of input: %.400s", name, strings.Count(string(r.Raw), "Z"), r.Raw)
		}
		if e.Extensions.Code != "BAD_INPUT" && e.Extensions.Code != "NOT_FOUND" {
			t.Errorf("%s: code %s", name, e.Extensions.Code)
		}
	}
}

func aliases(n int, field string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " a%d: %s", i, field)
	}
	b.WriteString(" }")
	return b.String()
}

func TestCostCountsListsAndIntrospection(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	refused := func(name, query string) {
		t.Helper()
		msg := k.mustFail(t, "BAD_INPUT", query, map[string]any{"s": sid, "n": 5000})
		if !strings.Contains(msg, "cost") || !strings.Contains(msg, fmt.Sprint(edge.MaxCost)) {
			t.Fatalf("%s: %s", name, msg)
		}
	}
	refused("alias bomb", "query($s: ID!) "+aliases(666, "session(id: $s) { messages { text } }"))
	refused("events bomb", "query($s: ID!) "+aliases(1000, "events(sessionId: $s, limit: 5000) { seq }"))
	refused("limit through a variable", `query($s: ID!, $n: Int) { a: events(sessionId: $s, limit: $n) { seq type at payload } b: events(sessionId: $s, limit: $n) { seq type at payload } c: events(sessionId: $s, limit: $n) { seq type at payload } d: events(sessionId: $s, limit: $n) { seq type at payload } e: events(sessionId: $s, limit: $n) { seq type at payload } }`)
	refused("introspection aliases", "query($s: ID!) { s: session(id: $s) { id } "+strings.TrimPrefix(aliases(20, "__schema { types { name fields { name } } }"), "{"))
	refused("fragments", "query($s: ID!) { ...F ...F2 } fragment F on Query "+aliases(300, "session(id: $s) { messages { text } }")+" fragment F2 on Query { x: sessions { messages { text seq role } } }")

	// Ordinary operations pass: a long event page, GraphiQL's schema query,
	// a session with its messages.
	k.mustDo(t, `query($s: ID!) { events(sessionId: $s, limit: 5000) { seq type at payload } }`, map[string]any{"s": sid}, nil)
	k.mustDo(t, introspectionQuery, nil, nil)
	k.mustDo(t, `query($s: ID!) { session(id: $s) { id title messages { seq role text reasoning toolCalls { id name input } } queue { id text } } }`, map[string]any{"s": sid}, nil)

	// A refused mutation does not run any of its fields.
	k.mustFail(t, "BAD_INPUT", "mutation "+aliases(600, `createSession(input: {title: "bomb"}) { messages { text } }`), nil)
	k.mustFail(t, "BAD_INPUT", "mutation "+aliases(1001, `createSession(input: {title: "bomb"}) { id }`), nil)
	var out struct{ Sessions []struct{ Title *string } }
	k.mustDo(t, `{ sessions { title } }`, nil, &out)
	for _, s := range out.Sessions {
		if s.Title != nil && *s.Title == "bomb" {
			t.Fatal("a mutation refused for its cost created a session")
		}
	}
}

// introspectionQuery is GraphiQL's schema query (graphql-js getIntrospectionQuery).
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } }`

func TestResponseCapEndsOversizedResponse(t *testing.T) {
	t.Parallel()
	const limit = 256 << 10
	k := newTestKernel(t, func(c *edge.Config) { c.Limits.MaxResponseBytes = limit })
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.TextStream(testModel, "ok"))
	k.send(t, sid, strings.Repeat("big ", 50_000)) // 200,000 bytes
	w.turnEnd()

	query := "query($s: ID!) " + aliases(5, "session(id: $s) { messages { seq text } }")
	body, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"s": sid}})
	r := postRaw(t, k, "application/json", bytes.NewReader(body))
	e := r.RequireCoded(t, "oversized response")
	if e.Extensions.Code != "BAD_INPUT" || !strings.Contains(e.Message, "256 KiB") || len(r.Errors) != 1 {
		t.Fatalf("errors %s", r.Raw)
	}
	if string(r.Data) != "" && string(r.Data) != "null" {
		t.Fatalf("an oversized response kept data: %.200s", r.Data)
	}
	if len(r.Raw) > 4096 {
		t.Fatalf("the refusal is %d bytes", len(r.Raw))
	}
	// One copy fits.
	k.mustDo(t, `query($s: ID!) { session(id: $s) { messages { seq text } } }`, map[string]any{"s": sid}, nil)
	// The mutation path says that the mutation ran.
	msg := k.mustFail(t, "BAD_INPUT", `mutation($s: ID!) { updateSession(id: $s, input: {pinned: true}) { a: messages { text } b: messages { text } } }`, map[string]any{"s": sid})
	if !strings.Contains(msg, "the mutation itself ran") {
		t.Fatalf("mutation message %q", msg)
	}
}

// The refusal of a response that reads whole sessions does not depend on
// the order gqlgen resolves its fields in: messages that would fit a
// response of their own make the whole response refused when, with the
// rest, they do not fit; messages larger than the limit are refused alone,
// naming the limit configured.
func TestResponseCapRefusalDoesNotDependOnOrder(t *testing.T) {
	t.Parallel()
	const limit = 256 << 10
	k := newTestKernel(t, func(c *edge.Config) { c.Limits.MaxResponseBytes = limit })
	session := func(texts ...string) string {
		sid := k.chatSession(t, nil, "BYPASS")
		w := k.watch(t, sid)
		for _, text := range texts {
			k.fake.Enqueue(openaitest.TextStream(testModel, "ok"))
			k.send(t, sid, text)
			w.turnEnd()
		}
		return sid
	}
	fits := session(strings.Repeat("big ", 40_000))                                   // 160,000 bytes
	over := session(strings.Repeat("huge ", 30_000), strings.Repeat("huge ", 30_000)) // 300,000 bytes
	for n := range 40 {
		// Two copies, and a copy behind other fields.
		query := "query($s: ID!) " + aliases(2, "session(id: $s) { messages { seq text } }")
		if n%2 == 1 {
			query = `query($s: ID!) { a: session(id: $s) { title messages { seq } } b: session(id: $s) { messages { text } } c: session(id: $s) { messages { text } } }`
		}
		r := k.do(t, query, map[string]any{"s": fits})
		if len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, "would be larger than 256 KiB") || (len(r.Data) > 0 && string(r.Data) != "null") {
			t.Fatalf("round %d: errors %+v, data %.200s", n, r.Errors, r.Data)
		}
	}
	r := k.do(t, `query($s: ID!) { session(id: $s) { title messages { text } } }`, map[string]any{"s": over})
	if len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, "larger than one response can carry (256 KiB, the response size limit)") {
		t.Fatalf("messages over the limit: errors %+v", r.Errors)
	}
}

func TestSubscriptionCaps(t *testing.T) {
	k := newTestKernel(t, func(c *edge.Config) {
		c.Limits.MaxSubscriptionsPerConnection = 3
		c.Limits.MaxSubscriptions = 5
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const sub = `subscription { kernelEvents { type } }`
	// A live subscription sends nothing until an event, so the first
	// message is the refusal.
	c1 := dialWS(t, ctx, k.srv.URL)
	defer c1.conn.Close(websocket.StatusNormalClosure, "")
	for _, id := range []string{"1", "2", "3", "4"} {
		c1.subscribe(ctx, id, sub, nil)
	}
	m := c1.read(ctx)
	refusedOn1 := m.ID
	if e := wsError(t, m); refusedOn1 != "4" || e.Extensions.Code != "BAD_INPUT" || !strings.Contains(e.Message, "3 subscriptions") {
		t.Fatalf("4th subscription on one connection: %s %s %s", m.ID, m.Type, m.Payload)
	}
	// The other three are live: an event reaches each of them. A
	// subscription goes live a moment after its subscribe message, so poke
	// until each has seen one.
	live := map[string]bool{}
	for len(live) < 3 {
		k.mustDo(t, `mutation { createSession(input: {title: "poke"}) { id } }`, nil, nil)
		tick := time.After(200 * time.Millisecond)
	wait:
		for len(live) < 3 {
			select {
			case m := <-c1.msgs:
				if m.ID == refusedOn1 && m.Type == "complete" {
					continue
				}
				if m.Type != "next" || m.ID == refusedOn1 {
					t.Fatalf("unexpected %s %s for %s", m.Type, m.Payload, m.ID)
				}
				live[m.ID] = true
			case <-tick:
				break wait
			case <-ctx.Done():
				t.Fatalf("events reached only %v of the three live subscriptions", live)
			}
		}
	}
	// Kernel-wide: 3 + 2 on another connection fill it, the next is refused.
	c2 := dialWS(t, ctx, k.srv.URL)
	defer c2.conn.Close(websocket.StatusNormalClosure, "")
	for _, id := range []string{"a", "b", "c"} {
		c2.subscribe(ctx, id, sub, nil)
	}
	m = c2.read(ctx)
	if e := wsError(t, m); m.ID != "c" || e.Extensions.Code != "UNAVAILABLE" || !strings.Contains(e.Message, "5 subscriptions") {
		t.Fatalf("6th subscription in the kernel: %s %s", m.Type, m.Payload)
	}
	// SSE subscriptions count against the same kernel-wide bound.
	body, _ := json.Marshal(map[string]any{"query": sub})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, k.srv.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sse, _ := io.ReadAll(resp.Body) // the refusal ends the stream
	resp.Body.Close()
	if !bytes.Contains(sse, []byte(`"UNAVAILABLE"`)) {
		t.Fatalf("SSE subscription over the kernel bound: %s", sse)
	}
	// Completing one frees its slot (on both counts).
	var done string
	for id := range live {
		done = id
		break
	}
	c1.send(ctx, map[string]any{"id": done, "type": "complete"})
	// A subscription goes live a moment after its subscribe message: poke
	// until the new one answers (an event or its refusal).
	for i := 0; ; i++ {
		id := fmt.Sprintf("again%d", i)
		c1.subscribe(ctx, id, sub, nil)
		var m wsMessage
	poke:
		for {
			k.mustDo(t, `mutation { createSession(input: {title: "poke"}) { id } }`, nil, nil)
			tick := time.After(200 * time.Millisecond)
			for {
				select {
				case m = <-c1.msgs:
					if m.ID == id {
						break poke
					}
				case <-tick:
					continue poke
				case <-ctx.Done():
					t.Fatal("the completed subscription's slot was never freed")
				}
			}
		}
		if m.Type == "next" && !bytes.Contains(m.Payload, []byte(`"errors"`)) {
			break
		}
	}
}

// wsError decodes the first error of a refused subscription (a next message
// with errors, or an error message).
func wsError(t *testing.T, m wsMessage) gqlError {
	t.Helper()
	var list []gqlError
	switch m.Type {
	case "next":
		var p gqlResponse
		json.Unmarshal(m.Payload, &p)
		list = p.Errors
	case "error":
		json.Unmarshal(m.Payload, &list)
	}
	if len(list) == 0 {
		t.Fatalf("message %s %s is not a refusal", m.Type, m.Payload)
	}
	return list[0]
}

func TestWebSocketMessageOverLimitClosesConnection(t *testing.T) {
	k := newTestKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dialWS(t, ctx, k.srv.URL)
	big := strings.Repeat("x", edge.MaxWebSocketMessageBytes+1)
	c.subscribe(ctx, "big", `subscription($p: String) { kernelEvents { type } }`, map[string]any{"p": big})
	select {
	case err := <-c.errc:
		if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
			t.Fatalf("closed with %v, want 1009 (message too big)", err)
		}
	case m := <-c.msgs:
		t.Fatalf("a %d-byte message was served: %s %.200s", len(big), m.Type, m.Payload)
	case <-ctx.Done():
		t.Fatal("the connection stayed open")
	}
}

func TestClipsAndEchoHelpersThroughTheAPI(t *testing.T) {
	k := newTestKernel(t)
	// A quoted value inside a kernel message keeps 64 bytes and says its size.
	name := strings.Repeat("q", 150)
	msg := k.mustFail(t, "BAD_INPUT", `mutation($k: String) { createConnection(input: {name: "x", baseUrl: "http://127.0.0.1:1/v1", providerKind: $k, models: [{id: "m"}]}) { id } }`, map[string]any{"k": name})
	if strings.Count(msg, "q") > graph.MaxEchoBytes || !strings.Contains(msg, "(150 bytes)") {
		t.Fatalf("message %q", msg)
	}
}
