package graph_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// A graphql-ws subscriber of a long reply streamed faster than frames are
// written (its deltas pile up and coalesce) still gets exactly the model's
// text: the concatenated deltas equal the message_end text, and the
// persisted events of the turn arrive once each.
func TestCoalescedDeltasOverWebSocket(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws := dialWS(t, ctx, k.srv.URL)
	defer ws.conn.Close(websocket.StatusNormalClosure, "")
	ws.subscribe(ctx, "1", subscribeEvents, map[string]any{"id": sid})
	time.Sleep(50 * time.Millisecond) // let the subscription register
	parts := make([]string, 3000)
	var want strings.Builder
	for i := range parts {
		parts[i] = string(rune('a'+i%26)) + " "
		want.WriteString(parts[i])
	}
	k.fake.Enqueue(openaitest.TextStream(testModel, parts...))
	k.send(t, sid, "go")
	var text strings.Builder
	deltas, ends := 0, 0
	for {
		ev := ws.nextEvent(ctx)
		switch ev.Type {
		case "message_delta":
			if ev.Seq != nil || ev.Delta == nil {
				t.Fatalf("delta %+v", ev)
			}
			deltas++
			text.WriteString(*ev.Delta)
		case "message_end":
			ends++
		}
		if ev.Type == "turn_finished" {
			break
		}
		if ev.Type == "message_end" && ev.Message != nil && ev.Message.Text != "go" {
			if ev.Message.Text != want.String() {
				t.Fatalf("message_end text differs from the model's")
			}
			if text.String() != want.String() {
				t.Fatalf("concatenated deltas (%d events, %d bytes) differ from the reply (%d bytes)", deltas, text.Len(), want.Len())
			}
		}
	}
	if ends != 2 {
		t.Fatalf("%d message_end events, want 2 (user, assistant)", ends)
	}
	t.Logf("%d chunks arrived as %d delta events", len(parts), deltas)
}
