package graph_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// capsKernel is a test kernel with output caps set by set.
func capsKernel(t *testing.T, set func(*engine.OutputLimits)) *testKernel {
	return newTestKernel(t, func(c *engine.Config) { set(&c.Output) })
}

type cappedMsg struct {
	Role       string
	Text       string
	Reasoning  *string
	IsError    bool
	Truncated  bool
	TurnReason *string
	ToolCalls  []struct {
		ID, Name string
		Input    json.RawMessage
	}
}

func (k *testKernel) cappedMessages(t *testing.T, sid string) []cappedMsg {
	t.Helper()
	var out struct {
		Session struct{ Messages []cappedMsg }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { messages { role text reasoning isError truncated turnReason toolCalls { id name input } } } }`,
		map[string]any{"s": sid}, &out)
	return out.Session.Messages
}

// deltaText concatenates the live deltas of type typ.
func deltaText(t *testing.T, evs []liveEvent, typ string) string {
	var b strings.Builder
	for _, e := range ofType(evs, typ) {
		var p struct{ Text string }
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// requestMaxTokens is the max output request i asked for (either field).
func (k *testKernel) requestMaxTokens(t *testing.T, i int) float64 {
	t.Helper()
	body := k.fake.Requests()[i].JSON()
	for _, f := range []string{"max_completion_tokens", "max_tokens"} {
		if v, ok := body[f].(float64); ok {
			return v
		}
	}
	return 0
}

func TestOutputCapTextAndReasoning(t *testing.T) {
	k := capsKernel(t, func(l *engine.OutputLimits) { l.TextBytes, l.ReasoningBytes = 1000, 500 })
	sid := k.chatSession(t, nil, "BYPASS")
	for _, tc := range []struct {
		name, field, flag, delta string
		limit                    int
	}{
		{"text", "content", "--max-reply-text", "message_delta", 1000},
		{"reasoning", "reasoning_content", "--max-reply-reasoning", "reasoning_delta", 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := []string{chunk(map[string]any{"role": "assistant"}, "")}
			for range 10 { // 3,000 bytes, then a normal end the kernel never reads
				events = append(events, chunk(map[string]any{tc.field: strings.Repeat("é", 150)}, ""))
			}
			events = append(events, chunk(map[string]any{}, "stop"))
			k.fake.Enqueue(openaitest.Response{Events: events})
			evs := k.followTurn(t, sid, func() { k.send(t, sid, "talk") })
			p := turnOutcome(t, evs)
			if p.Status != core.TurnFailed || p.Code != engine.CodeOutputLimit || !strings.HasPrefix(p.Reason, "output_limit:") || !strings.Contains(p.Reason, tc.flag) {
				t.Fatalf("turn %+v", p)
			}
			msgs := k.cappedMessages(t, sid)
			m := msgs[len(msgs)-1]
			got := m.Text
			if tc.name == "reasoning" {
				got = deref(m.Reasoning)
			}
			// Kept up to the cap, on a character boundary (é is 2 bytes).
			if len(got) != tc.limit || !m.Truncated || deref(m.TurnReason) != p.Reason {
				t.Fatalf("message: %d bytes, truncated %v, reason %q", len(got), m.Truncated, deref(m.TurnReason))
			}
			if d := deltaText(t, evs, tc.delta); d != got {
				t.Fatalf("deltas carried %d bytes, the message %d", len(d), len(got))
			}
		})
	}
	// The next turn sends the cut reply back marked as cut.
	k.fake.Enqueue(openaitest.TextStream(testModel, "fine"))
	if p := turnOutcome(t, k.followTurn(t, sid, func() { k.send(t, sid, "again") })); p.Status != core.TurnCompleted || p.Code != "" {
		t.Fatalf("turn %+v", p)
	}
	if raw := string(k.fake.LastRequest().Body); !strings.Contains(raw, "reached its output limit") {
		t.Fatalf("the cut reply is not marked in the next request: %.400s", raw)
	}
}

// A call whose arguments pass the cap is not run: the model gets a tool
// error saying so and the turn goes on.
func TestOutputCapToolArgsRefusedTurnContinues(t *testing.T) {
	k := capsKernel(t, func(l *engine.OutputLimits) { l.ToolArgsBytes = 1000 })
	sid := k.chatSession(t, nil, "BYPASS")
	events := []string{chunk(map[string]any{"role": "assistant", "content": "Writing."}, ""),
		chunk(toolCallDelta(0, "call_big", "write", `{"path":"big.txt","content":"`), "")}
	for range 10 {
		events = append(events, chunk(toolCallDelta(0, "", "", strings.Repeat("a", 600)), ""))
	}
	events = append(events, chunk(toolCallDelta(0, "", "", `"}`), ""), chunk(map[string]any{}, "tool_calls"))
	k.fake.Enqueue(openaitest.Response{Events: events}, openaitest.TextStream(testModel, "I will write it in parts."))
	evs := k.followTurn(t, sid, func() { k.send(t, sid, "write a big file") })
	if p := turnOutcome(t, evs); p.Status != core.TurnCompleted || p.Code != "" {
		t.Fatalf("turn %+v", p)
	}
	if d := deltaText(t, evs, "tool_call_delta"); len(d) != 1000 {
		t.Fatalf("tool call deltas carried %d bytes", len(d))
	}
	msgs := k.cappedMessages(t, sid)
	if len(msgs) != 4 {
		t.Fatalf("messages %+v", msgs)
	}
	call, result := msgs[1], msgs[2]
	var kept string
	if !call.Truncated || len(call.ToolCalls) != 1 || json.Unmarshal(call.ToolCalls[0].Input, &kept) != nil || len(kept) != 1000 {
		t.Fatalf("assistant message %+v", call)
	}
	if !result.IsError || !strings.Contains(result.Text, "not run") || !strings.Contains(result.Text, "1000 bytes") || !strings.Contains(result.Text, "--max-tool-call-args") {
		t.Fatalf("tool message %+v", result)
	}
	// The cut arguments stay out of the model's context: the next request
	// replays the call with {} and the tool error.
	reqMsgs := k.requestMessages(t, 1)
	var sawCall bool
	for _, m := range reqMsgs {
		if calls, ok := m["tool_calls"].([]any); ok {
			fn := calls[0].(map[string]any)["function"].(map[string]any)
			if fn["arguments"] != "{}" {
				t.Fatalf("replayed arguments %v", fn["arguments"])
			}
			sawCall = true
		}
	}
	if !sawCall {
		t.Fatalf("request %+v", reqMsgs)
	}
}

func TestOutputCapTurnTokens(t *testing.T) {
	k := capsKernel(t, func(l *engine.OutputLimits) { l.TurnOutputTokens = 100 })
	declared := k.chatSession(t, map[string]any{"contextWindow": 100000, "maxOutputTokens": 5000}, "BYPASS")
	// The provider is asked for at most what the turn may still spend.
	k.fake.Enqueue(openaitest.TextStream(testModel, "short"))
	if p := turnOutcome(t, k.followTurn(t, declared, func() { k.send(t, declared, "hi") })); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	if got := k.requestMaxTokens(t, 0); got != 100 {
		t.Fatalf("max output sent %v, want 100", got)
	}
	// A reply over the budget (600 bytes, ~150 tokens) is cut by the kernel.
	k.fake.Enqueue(openaitest.TextStream(testModel, strings.Repeat("word ", 60), strings.Repeat("word ", 60)))
	p := turnOutcome(t, k.followTurn(t, declared, func() { k.send(t, declared, "more") }))
	if p.Status != core.TurnFailed || p.Code != engine.CodeOutputLimit || !strings.Contains(p.Reason, "--max-turn-output-tokens") {
		t.Fatalf("turn %+v", p)
	}
	msgs := k.cappedMessages(t, declared)
	if m := msgs[len(msgs)-1]; !m.Truncated || len(m.Text) > 400 {
		t.Fatalf("message %d bytes, truncated %v", len(m.Text), m.Truncated)
	}
	// The provider's own stop at the sent max output is OUTPUT_LIMIT too.
	k.fake.Enqueue(openaitest.Response{Events: []string{chunk(map[string]any{"role": "assistant", "content": "cut"}, "length"), openaitest.UsageChunk(testModel, 10, 100, 0)}})
	p = turnOutcome(t, k.followTurn(t, declared, func() { k.send(t, declared, "again") }))
	if p.Status != core.TurnFailed || p.Code != engine.CodeOutputLimit {
		t.Fatalf("turn %+v", p)
	}
}

func TestOutputCapTurnTokensUndeclaredModel(t *testing.T) {
	for _, tc := range []struct {
		limit int64
		sent  float64
	}{
		{100, 100}, // small: sent even to a model that declares no limit
		{0, 0},     // the default (1,000,000): not sent to such a model
	} {
		k := capsKernel(t, func(l *engine.OutputLimits) { l.TurnOutputTokens = tc.limit })
		sid := k.chatSession(t, nil, "BYPASS")
		k.fake.Enqueue(openaitest.TextStream(testModel, "ok"))
		if p := turnOutcome(t, k.followTurn(t, sid, func() { k.send(t, sid, "hi") })); p.Status != core.TurnCompleted {
			t.Fatalf("turn %+v", p)
		}
		if got := k.requestMaxTokens(t, 0); got != tc.sent {
			t.Fatalf("limit %d: max output sent %v, want %v", tc.limit, got, tc.sent)
		}
	}
}

// A stall is a network error: retried when nothing arrived yet.
func TestModelIdleTimeoutRetried(t *testing.T) {
	t.Parallel()
	k := capsKernel(t, func(l *engine.OutputLimits) { l.IdleTimeout = 300 * time.Millisecond })
	sid := k.chatSession(t, nil, "BYPASS")
	k.fake.Enqueue(openaitest.Response{Hang: true, Events: []string{chunk(map[string]any{"role": "assistant"}, "")}}, openaitest.TextStream(testModel, "ok"))
	evs := k.followTurn(t, sid, func() { k.send(t, sid, "hi") })
	if p := turnOutcome(t, evs); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	retries := ofType(evs, "retry_scheduled")
	if len(retries) != 1 {
		t.Fatalf("retries %+v", evs)
	}
	var r core.RetryPayload
	json.Unmarshal(retries[0].Payload, &r)
	if r.Category != core.ProviderNetwork || !strings.Contains(r.Reason, "--model-idle-timeout") {
		t.Fatalf("retry %+v", r)
	}
	// The stalled request was closed.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := k.fake.WaitCancelled(ctx); err != nil {
		t.Fatalf("the stalled request is still open: %v", err)
	}
	// A stall after output is a network error too, not retried (the
	// partial reply is kept).
	k.fake.Enqueue(openaitest.Response{Hang: true, Events: []string{chunk(map[string]any{"role": "assistant", "content": "Half"}, "")}})
	evs = k.followTurn(t, sid, func() { k.send(t, sid, "again") })
	if p := turnOutcome(t, evs); p.Status != core.TurnFailed || !strings.HasPrefix(p.Reason, "network:") || p.Code != "" || len(ofType(evs, "retry_scheduled")) != 0 {
		t.Fatalf("turn %+v", p)
	}
}

func TestModelCallTimeout(t *testing.T) {
	t.Parallel()
	k := capsKernel(t, func(l *engine.OutputLimits) { l.CallTimeout, l.IdleTimeout = 600*time.Millisecond, 5*time.Second })
	sid := k.chatSession(t, nil, "BYPASS")
	events := []string{chunk(map[string]any{"role": "assistant"}, "")}
	for range 100 {
		events = append(events, chunk(map[string]any{"content": "x"}, ""))
	}
	k.fake.Enqueue(openaitest.Response{Events: events, Delay: 50 * time.Millisecond})
	start := time.Now()
	evs := k.followTurn(t, sid, func() { k.send(t, sid, "hi") })
	p := turnOutcome(t, evs)
	if p.Status != core.TurnFailed || p.Code != engine.CodeOutputLimit || !strings.Contains(p.Reason, "--model-call-timeout") {
		t.Fatalf("turn %+v", p)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Fatalf("the turn took %s", took)
	}
	msgs := k.cappedMessages(t, sid)
	if m := msgs[len(msgs)-1]; !m.Truncated || m.Text == "" || len(m.Text) >= 100 {
		t.Fatalf("message %+v", m)
	}
}
