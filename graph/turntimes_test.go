package graph_test

import (
	"strings"
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

// MSG-11: segments replay the streamed order, across reasoning, text and tool calls.
func TestSegmentsKeepStreamedOrder(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(map[string]any{"role": "assistant", "reasoning_content": "Think"}, ""),
		chunk(map[string]any{"reasoning_content": "ing."}, ""),
		chunk(map[string]any{"content": "Let me look."}, ""),
		chunk(toolCallDelta(0, "call_a", "lookup", `{"q":`), ""),
		chunk(toolCallDelta(0, "", "", `"x"}`), ""),
		chunk(map[string]any{"reasoning_content": "Also y."}, ""),
		chunk(map[string]any{"content": " And y."}, ""),
		chunk(toolCallDelta(1, "call_b", "lookup", `{"q":"y"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "done"))
	k.send(t, sid, "go")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	var out struct {
		Session struct {
			Messages []struct {
				Text, Reasoning string
				Segments        []struct {
					Kind       string
					Text       *string
					ToolCallID *string
				}
			}
		}
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { messages { text reasoning segments { kind text toolCallId } } } }`, map[string]any{"s": sid}, &out)
	a := out.Session.Messages[1]
	var got []string
	for _, sg := range a.Segments {
		got = append(got, sg.Kind+":"+deref(sg.Text)+deref(sg.ToolCallID))
	}
	want := "reasoning:Thinking.|text:Let me look.|tool_call:call_a|reasoning:Also y.|text: And y.|tool_call:call_b"
	if strings.Join(got, "|") != want || a.Text != "Let me look. And y." || a.Reasoning != "Thinking.Also y." {
		t.Fatalf("segments %q\nwant %q (message %q / %q)", strings.Join(got, "|"), want, a.Text, a.Reasoning)
	}
}

// A turn that failed before any output recorded only its user message: the
// message still gets the turn's end, from its turn_finished event.
func TestTurnTimesOfATurnWithoutOutput(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Error(400, "invalid_request_error", "", "this request is refused"))
	k.send(t, sid, "fail me")
	end := w.turnEnd()
	if end.Status != core.TurnFailed || end.FinishedAt == nil {
		t.Fatalf("turn_finished %+v", end)
	}
	var out struct {
		Session struct {
			Messages []struct {
				Role                          string
				TurnStartedAt, TurnFinishedAt *time.Time
			}
		}
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { messages(last: 10) { role turnStartedAt turnFinishedAt } } }`, map[string]any{"s": sid}, &out)
	msgs := out.Session.Messages
	if len(msgs) != 1 || msgs[0].Role != "USER" || msgs[0].TurnStartedAt == nil || msgs[0].TurnFinishedAt == nil || !msgs[0].TurnFinishedAt.Equal(*end.FinishedAt) {
		t.Fatalf("messages %+v, turn end %v", msgs, end.FinishedAt)
	}
}
