package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
)

// busySession returns a session whose turn hangs, so that input queues.
func (k *testKernel) busySession(t *testing.T) string {
	t.Helper()
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(hanging())
	if !k.send(t, sid, "first").SendMessage.TurnStarted {
		t.Fatal("first did not start")
	}
	w.next(core.EventMessageDelta)
	return sid
}

func TestQueueHoldsAtMost100Items(t *testing.T) {
	k := newTestKernel(t)
	sid := k.busySession(t)
	for i := range engine.MaxQueueItems {
		if r := k.send(t, sid, fmt.Sprintf("q%d", i)); r.SendMessage.QueueItem == nil {
			t.Fatalf("item %d was not queued: %+v", i, r)
		}
	}
	msg := k.mustFail(t, "BAD_INPUT", `mutation($s: ID!) { sendMessage(sessionId: $s, input: {text: "one too many"}) { turnStarted } }`, map[string]any{"s": sid})
	if !strings.Contains(msg, "100 queued messages") {
		t.Fatalf("message %q does not name the limit", msg)
	}
	if q := k.queue(t, sid); len(q) != engine.MaxQueueItems {
		t.Fatalf("queue holds %d", len(q))
	}
	// Deleting one makes room again.
	q := k.queue(t, sid)
	k.mustDo(t, `mutation($s: ID!, $i: ID!) { deleteQueuedMessage(sessionId: $s, itemId: $i) { id } }`, map[string]any{"s": sid, "i": q[0].ID}, nil)
	k.send(t, sid, "fits again")
}

func TestQueueHoldsAtMost4MiB(t *testing.T) {
	t.Parallel()
	k := newTestKernel(t)
	sid := k.busySession(t)
	big := strings.Repeat("x", 250_000)
	n := 0
	for ; n < 50; n++ {
		r := k.do(t, `mutation($s: ID!, $t: String) { sendMessage(sessionId: $s, input: {text: $t}) { turnStarted } }`, map[string]any{"s": sid, "t": big})
		if len(r.Errors) > 0 {
			if r.Errors[0].Extensions.Code != "BAD_INPUT" || !strings.Contains(r.Errors[0].Message, "4 MiB") {
				t.Fatalf("refusal %+v", r.Errors[0])
			}
			break
		}
	}
	if want := engine.MaxQueueInputBytes / 250_000; n != want {
		t.Fatalf("%d items of 250,000 bytes were queued, want %d", n, want)
	}
	// 16 × 250,000 bytes are queued; 190,000 more fit (4,190,000 of
	// 4,194,304), then an edit that grows an item by 6,000 bytes does not,
	// and the item keeps its old text.
	k.send(t, sid, strings.Repeat("s", 190_000))
	q := k.queue(t, sid)
	k.mustFail(t, "BAD_INPUT", `mutation($s: ID!, $i: ID!, $t: String) { editQueuedMessage(sessionId: $s, itemId: $i, input: {text: $t}) { id } }`,
		map[string]any{"s": sid, "i": q[0].ID, "t": strings.Repeat("y", 256_000)})
	if q := k.queue(t, sid); q[0].Text != big {
		t.Fatal("a refused edit changed the item")
	}
}

func TestQueueSnapshotCarriesPreviews(t *testing.T) {
	k := newTestKernel(t)
	sid := k.busySession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dialWS(t, ctx, k.srv.URL)
	defer c.conn.Close(websocket.StatusNormalClosure, "")
	c.subscribe(ctx, "q", `subscription($s: ID!) { sessionEvents(sessionId: $s) { type queue { id text textBytes truncated } } }`, map[string]any{"s": sid})
	long := strings.Repeat("é", 5000) // 10,000 bytes
	type item struct {
		ID        string
		Text      string
		TextBytes int
		Truncated bool
	}
	var snap []item
	sentLong := false
	m := c.readPoking(ctx, "q", func() { k.send(t, sid, "short") })
	for {
		var p struct {
			Data struct {
				SessionEvents struct {
					Type  string
					Queue []item
				}
			}
		}
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if ev := p.Data.SessionEvents; ev.Type == "queue_snapshot" && len(ev.Queue) > 0 && ev.Queue[len(ev.Queue)-1].TextBytes == len(long) {
			snap = ev.Queue
			break
		}
		if p.Data.SessionEvents.Type == "queue_snapshot" && !sentLong {
			k.send(t, sid, long)
			sentLong = true
		}
		m = c.read(ctx)
	}
	got := snap[len(snap)-1]
	if !got.Truncated || len(got.Text) > engine.QueuePreviewBytes || !strings.HasPrefix(long, got.Text) || got.Text == "" {
		t.Fatalf("snapshot item: truncated=%v, %d bytes of text", got.Truncated, len(got.Text))
	}
	if first := snap[0]; first.Truncated || first.Text != "short" || first.TextBytes != 5 {
		t.Fatalf("short item %+v", first)
	}
	// The whole text is a query away.
	var out struct {
		Session struct{ Queue []item }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { queue { id text textBytes truncated } } }`, map[string]any{"s": sid}, &out)
	full := out.Session.Queue[len(out.Session.Queue)-1]
	if full.ID != got.ID || full.Text != long || full.Truncated || full.TextBytes != len(long) {
		t.Fatalf("Session.queue item: truncated=%v, %d bytes", full.Truncated, len(full.Text))
	}
}

func TestNamesRefuseControlCharactersAndAreBounded(t *testing.T) {
	k := newTestKernel(t)
	model := func(id string) []any { return []any{map[string]any{"id": id}} }
	create := `mutation($in: ConnectionInput!) { createConnection(input: $in) { id } }`
	conn := func(name string, models []any, key string) map[string]any {
		return map[string]any{"in": map[string]any{"name": name, "baseUrl": k.fake.BaseURL(), "apiKey": key, "models": models}}
	}
	manyModels := make([]any, core.MaxModelsPerConnection+1)
	for i := range manyModels {
		manyModels[i] = map[string]any{"id": fmt.Sprintf("m%d", i)}
	}
	for name, c := range map[string]struct {
		vars  map[string]any
		field string
	}{
		"ESC in a name":          {conn("evil\x1b[2Jname", model("m"), ""), "input.name"},
		"newline in a name":      {conn("two\nlines", model("m"), ""), "input.name"},
		"RLO in a name":          {conn("abc\u202etxt.exe", model("m"), ""), "input.name"},
		"C1 in a model id":       {conn("ok", model("gpt\u009b31m"), ""), "input.models[0].id"},
		"isolate in a model id":  {conn("ok", model("gpt\u2066x"), ""), "input.models[0].id"},
		"name over 200":          {conn(strings.Repeat("n", 201), model("m"), ""), "input.name"},
		"model id over 256":      {conn("ok", model(strings.Repeat("m", 257)), ""), "input.models[0].id"},
		"key over 4 KiB":         {conn("ok", model("m"), strings.Repeat("k", 4097)), "input.apiKey"},
		"over 2000 models":       {conn("ok", manyModels, ""), "input.models"},
		"many bad models listed": {conn("ok", []any{map[string]any{"id": "a\x01"}, map[string]any{"id": "b\x01"}, map[string]any{"id": "c\x01"}, map[string]any{"id": "d\x01"}, map[string]any{"id": "e\x01"}, map[string]any{"id": "f\x01"}, map[string]any{"id": "g\x01"}, map[string]any{"id": "h\x01"}, map[string]any{"id": "i\x01"}, map[string]any{"id": "j\x01"}}, ""), "and 2 more problems"},
	} {
		t.Run(name, func(t *testing.T) {
			msg := k.mustFail(t, "BAD_INPUT", create, c.vars)
			if !strings.Contains(msg, c.field) {
				t.Fatalf("message %q does not name %s", msg, c.field)
			}
			if strings.ContainsAny(msg, "\x1b\u202e\u009b\u2066\x01\n") {
				t.Fatalf("message repeats the control character: %q", msg)
			}
		})
	}
	// At the bounds it is accepted.
	k.mustDo(t, create, conn(strings.Repeat("n", 200), model(strings.Repeat("m", 256)), strings.Repeat("k", 4096)), nil)
	atMax := make([]any, core.MaxModelsPerConnection)
	copy(atMax, manyModels)
	k.mustDo(t, create, conn("two thousand", atMax, ""), nil)

	// Session titles and project names.
	for _, title := range []string{"a\x00b", "tab\there", "x\u202ey", "del\x7f", "c1\u0085"} {
		k.mustFail(t, "BAD_INPUT", `mutation($t: String) { createSession(input: {title: $t}) { id } }`, map[string]any{"t": title})
	}
	var s struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation { createSession(input: {title: "fine — ünïcode ✓ עברית"}) { id } }`, nil, &s)
	k.mustFail(t, "BAD_INPUT", `mutation($s: ID!) { updateSession(id: $s, input: {title: "bell\u0007"}) { id } }`, map[string]any{"s": s.CreateSession.ID})
	k.mustFail(t, "BAD_INPUT", `mutation($p: String!) { createProject(input: {path: $p, name: "a\u001bb"}) { id } }`, map[string]any{"p": t.TempDir()})
}
