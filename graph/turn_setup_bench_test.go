package graph_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foya-dev/foya/core/engine"
	corehooks "github.com/foya-dev/foya/core/hooks"
	"github.com/foya-dev/foya/plugins/hooks"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// BenchmarkTurnOnLongHistory measures whole short turns (sendMessage to
// turn_finished at a graphql-ws subscriber, a one-chunk reply) in a session
// that already holds 100 turns of 8 KB replies, with hooks configured as
// `foya serve` configures them (none defined). Most of a short turn's work
// is before the model request (reading and compiling the history), so its
// allocations (-benchmem) show that work independently of the machine's
// load.
//
//	go test -run '^$' -bench TurnOnLongHistory -benchmem -benchtime 50x ./graph/
func BenchmarkTurnOnLongHistory(b *testing.B) {
	hookDir := b.TempDir()
	k := newTestKernel(b, func(c *engine.Config) {
		c.Hooks = corehooks.New(hooks.Store{Dir: hookDir}, hooks.NewRunner(hookDir, c.Logger))
	})
	sid := k.chatSession(b, nil, "BYPASS")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ws := dialWS(b, ctx, k.srv.URL)
	defer ws.conn.Close(websocket.StatusNormalClosure, "")
	ws.subscribe(ctx, "1", `subscription($id: ID!) { sessionEvents(sessionId: $id) { seq type delta } }`, map[string]any{"id": sid})
	time.Sleep(50 * time.Millisecond)
	turn := func(reply ...string) {
		k.fake.Enqueue(openaitest.TextStream(testModel, reply...))
		k.send(b, sid, "go")
		for {
			if ev := ws.nextEvent(ctx); ev.Type == "turn_finished" {
				return
			}
		}
	}
	long := strings.Repeat("history ", 1024)
	for range 100 {
		turn(long)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		turn("ok")
	}
}
