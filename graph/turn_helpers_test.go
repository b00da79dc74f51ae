package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

const testModel = "gpt-t"

var chatConnSeq atomic.Int64

// chatSession creates a connection to the fake endpoint and a session bound
// to it. The session has a title, so no title request interferes.
func (k *testKernel) chatSession(t testing.TB, caps map[string]any, approval string) string {
	t.Helper()
	model := map[string]any{"id": testModel}
	if caps != nil {
		model["capabilities"] = caps
	}
	// Connection names are unique: each call adds its own.
	name := fmt.Sprintf("fake-%d", chatConnSeq.Add(1))
	conn := k.createConn(t, map[string]any{"name": name, "baseUrl": k.fake.BaseURL(), "apiKey": "sk-fake", "models": []any{model}})
	var s struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation($c: ID, $a: ApprovalMode) { createSession(input: {connectionId: $c, title: "test", approvalMode: $a}) { id } }`,
		map[string]any{"c": conn.ID, "a": approval}, &s)
	return s.CreateSession.ID
}

type sendJSON struct {
	SendMessage struct {
		TurnStarted bool
		QueueItem   *struct{ ID, Text string }
	}
}

func (k *testKernel) send(t testing.TB, sid, text string) sendJSON {
	t.Helper()
	var out sendJSON
	k.mustDo(t, `mutation($s: ID!, $t: String) { sendMessage(sessionId: $s, input: {text: $t}) { turnStarted queueItem { id text } } }`,
		map[string]any{"s": sid, "t": text}, &out)
	return out
}

// watcher follows a session's events from now on.
type watcher struct {
	t  testing.TB
	ch <-chan core.Event
}

func (k *testKernel) watch(t testing.TB, sid string) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := k.svc.Subscribe(ctx, sid, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &watcher{t: t, ch: ch}
}

// next returns the next event of type typ, skipping others.
func (w *watcher) next(typ core.EventType) core.Event {
	w.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-w.ch:
			if !ok {
				w.t.Fatalf("stream closed waiting for %s", typ)
			}
			if ev.Type == typ {
				return ev
			}
		case <-timeout:
			w.t.Fatalf("no %s within 20s", typ)
		}
	}
}

// turnEnd waits for turn_finished and returns its payload.
func (w *watcher) turnEnd() core.TurnPayload {
	w.t.Helper()
	var p core.TurnPayload
	if err := w.next(core.EventTurnFinished).Decode(&p); err != nil {
		w.t.Fatal(err)
	}
	return p
}

type msgJSON struct {
	Seq         int64
	Role        string
	Text        string
	Reasoning   *string
	ToolCallID  *string
	ToolName    *string
	IsError     bool
	TurnStatus  *string
	TurnReason  *string
	Interrupted bool
	ToolCalls   []struct {
		ID, Name string
		Input    json.RawMessage
	}
	Segments []struct{ Kind string }
}

func (k *testKernel) messages(t testing.TB, sid string) []msgJSON {
	t.Helper()
	var out struct {
		Session struct{ Messages []msgJSON }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { messages { seq role text reasoning toolCallId toolName isError turnStatus turnReason interrupted toolCalls { id name input } segments { kind } } } }`,
		map[string]any{"s": sid}, &out)
	return out.Session.Messages
}

// requestMessages decodes the chat messages of request i to the fake.
func (k *testKernel) requestMessages(t testing.TB, i int) []map[string]any {
	t.Helper()
	reqs := k.fake.Requests()
	if i >= len(reqs) {
		t.Fatalf("only %d requests", len(reqs))
	}
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(reqs[i].Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.Messages
}

func chunk(delta map[string]any, finish string) string {
	return openaitest.Chunk(testModel, delta, finish)
}

func toolCallDelta(index int, id, name, args string) map[string]any {
	fn := map[string]any{"arguments": args}
	if name != "" {
		fn["name"] = name
	}
	call := map[string]any{"index": index, "function": fn}
	if id != "" {
		call["id"], call["type"] = id, "function"
	}
	return map[string]any{"tool_calls": []any{call}}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func openaitest_TextStream(parts ...string) openaitest.Response {
	return openaitest.TextStream(testModel, parts...)
}
