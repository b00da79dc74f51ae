package graph_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// The history a turn reads from the session service's cache is the
// messages projection of the store, message for message (seq and active
// flag included), after every kind of change: turns with tool calls, a
// rewind, and an append by another writer that bypasses the service (as
// another kernel on a shared database does).
func TestHistoryCacheMatchesStore(t *testing.T) {
	ctx := context.Background()
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)

	check := func(step string) {
		t.Helper()
		s, err := k.svc.Session(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		for _, inactive := range []bool{true, false} {
			want, err := k.db.Messages(ctx, sid, inactive)
			if err != nil {
				t.Fatal(err)
			}
			// Twice: a miss fills the cache, the second read is a hit.
			for i := range 2 {
				got, err := k.svc.History(ctx, s, inactive)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want)
					t.Fatalf("%s (includeInactive %v, read %d): cached history differs from the store:\n got %s\nwant %s", step, inactive, i, g, w)
				}
			}
		}
	}

	k.fake.Enqueue(openaitest.TextStream(testModel, "first answer"))
	k.send(t, sid, "one")
	w.turnEnd()
	check("after a text turn")

	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c1", "bash", `{"command":"echo hi"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "ran it"))
	k.send(t, sid, "two")
	w.turnEnd()
	check("after a turn with a tool call")

	// The third request carries what the cache held: the whole history.
	k.fake.Enqueue(openaitest.TextStream(testModel, "third"))
	k.send(t, sid, "three")
	w.turnEnd()
	check("after a third turn")
	msgs := k.messages(t, sid)
	var second int64
	for _, m := range msgs {
		if m.Role == "USER" && m.Text == "two" {
			second = m.Seq
		}
	}
	if second == 0 {
		t.Fatalf("no user message two in %+v", msgs)
	}

	// Rewind to the second user message: those after it become inactive.
	p := k.preview(t, sid, second)
	k.mustDo(t, confirmQ, map[string]any{"s": sid, "m": second, "h": p.HeadSeq, "t": p.FileStateToken}, nil)
	check("after a rewind")
	k.fake.Enqueue(openaitest.TextStream(testModel, "after rewind"))
	k.send(t, sid, "two again")
	w.turnEnd()
	check("after a turn following the rewind")
	reqs := k.fake.Requests()
	last := k.requestMessages(t, len(reqs)-1)
	for _, m := range last {
		if m["content"] == "two" || m["content"] == "ran it" {
			t.Fatalf("the request after the rewind still carries rewound message %v", m)
		}
	}

	// Another writer appends a message to the store directly: the cached
	// history (at the old head) is not used.
	ev, err := core.NewEvent(sid, core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleSystem, Text: "written elsewhere"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.db.Append(ctx, sid, core.AnyHead, []core.Event{ev}); err != nil {
		t.Fatal(err)
	}
	check("after an append that bypassed the service")
	k.fake.Enqueue(openaitest.TextStream(testModel, "seen"))
	k.send(t, sid, "four")
	w.turnEnd()
	check("after a turn following the foreign append")
	reqs = k.fake.Requests()
	found := false
	for _, m := range k.requestMessages(t, len(reqs)-1) {
		if s, ok := m["content"].(string); ok && s == "written elsewhere" {
			found = true
		}
	}
	if !found {
		t.Fatal("the request after the foreign append does not carry its message")
	}
}
