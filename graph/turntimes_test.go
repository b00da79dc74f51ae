package graph_test

import (
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// MSG-5: a turn's own start and end, on turn_finished and on every message of the turn.
func TestTurnTimes(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "call_l", "lookup", `{"q":"x"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "found"))
	k.send(t, sid, "look it up")
	end := w.turnEnd()
	if end.Status != core.TurnCompleted || end.StartedAt == nil || end.FinishedAt == nil || end.FinishedAt.Before(*end.StartedAt) {
		t.Fatalf("turn_finished %+v", end)
	}
	var out struct {
		Session struct {
			Messages []struct {
				Role                                                 string
				StartedAt, FinishedAt, TurnStartedAt, TurnFinishedAt *time.Time
			}
		}
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { messages { role startedAt finishedAt turnStartedAt turnFinishedAt } } }`, map[string]any{"s": sid}, &out)
	msgs := out.Session.Messages
	if len(msgs) != 4 {
		t.Fatalf("messages %+v", msgs)
	}
	for i, m := range msgs {
		if m.TurnStartedAt == nil || !m.TurnStartedAt.Equal(*end.StartedAt) || m.TurnFinishedAt == nil || !m.TurnFinishedAt.Equal(*end.FinishedAt) {
			t.Fatalf("message %d (%s) turn times %v %v, turn %v %v", i, m.Role, m.TurnStartedAt, m.TurnFinishedAt, end.StartedAt, end.FinishedAt)
		}
	}
	// The two assistant messages keep their own request times, inside the turn.
	a1, a2 := msgs[1], msgs[3]
	if a1.StartedAt.Before(*end.StartedAt) || a2.StartedAt.Before(*a1.FinishedAt) || a2.FinishedAt.After(*end.FinishedAt) {
		t.Fatalf("request times %v-%v, %v-%v in turn %v-%v", a1.StartedAt, a1.FinishedAt, a2.StartedAt, a2.FinishedAt, end.StartedAt, end.FinishedAt)
	}
}
