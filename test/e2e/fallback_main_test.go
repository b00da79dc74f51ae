package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	at "github.com/foya-dev/foya/providers/anthropic/anthropictest"
)

// Fallback through the real binary and the out-of-process Anthropic
// provider: an overloaded primary (529) hands the call to the fallback
// connection, whose request carries none of the primary route's signed
// thinking (dropped as after a manual switch); the next turn is on the
// primary again, and its state comes back on its own route.
func TestRouteFallbackDropsNativeState(t *testing.T) {
	t.Parallel()
	model := map[string]any{"id": claude, "capabilities": map[string]any{"contextWindow": 200000, "maxOutputTokens": 32000, "reasoningEfforts": []any{"low", "high"}}}
	k := startNative(t, "anthropic", "", model, "high")
	const haiku = "claude-haiku-4-5"
	backup := k.createConnection(t, "anthropic", "backup", k.fake.URL, map[string]any{"id": haiku})
	k.gql(t, `mutation($m: [ModelRefInput!]!) { setFallbackModels(purpose: LANGUAGE, models: $m) { fallbacks { purpose } } }`,
		map[string]any{"m": []any{map[string]any{"connectionId": backup, "model": haiku}}}, nil)

	const sig = "EqQBCkgIARABGAIiQL+fallback/signature=="
	k.fake.Enqueue(at.Stream(at.Start(claude, at.Usage{Input: 12}), at.Thinking(0, sig, "thinking about it"), at.Text(1, "First."), at.End("end_turn", 5)))
	if st, reason := k.send(t, "one"); st != "completed" {
		t.Fatalf("first turn %s: %s", st, reason)
	}
	k.fake.Enqueue(at.Error(529, "overloaded_error", "Overloaded", nil),
		at.Stream(at.Start(haiku, at.Usage{Input: 20}), at.Text(0, "From backup."), at.End("end_turn", 3)))
	if st, reason := k.send(t, "two"); st != "completed" {
		t.Fatalf("fallback turn %s: %s", st, reason)
	}
	failed, answered := k.body(t, -2), k.body(t, -1)
	if failed["model"] != claude || !strings.Contains(string(k.fake.Requests()[len(k.fake.Requests())-2].Body), sig) {
		t.Fatalf("the primary's request lacks its own state: model %v", failed["model"])
	}
	if answered["model"] != haiku || strings.Contains(string(k.fake.Requests()[len(k.fake.Requests())-1].Body), sig) {
		t.Fatalf("fallback request: model %v, carries the primary's signed thinking: %v", answered["model"], strings.Contains(string(k.fake.Requests()[len(k.fake.Requests())-1].Body), sig))
	}
	var fb struct {
		From, To struct{ ConnectionID, Model string }
		Reason   string
		Attempt  int
	}
	n := 0
	for _, e := range k.events(t) {
		if e.Type == "route_fallback" {
			n++
			_ = json.Unmarshal(e.Payload, &fb)
		}
	}
	if n != 1 || fb.From.Model != claude || fb.To.ConnectionID != backup || fb.To.Model != haiku || fb.Reason != "overloaded" || fb.Attempt != 1 {
		t.Fatalf("%d route_fallback events, last %+v", n, fb)
	}
	// The next turn: the primary again, with its own state back.
	k.fake.Enqueue(at.Stream(at.Start(claude, at.Usage{Input: 30}), at.Text(0, "Third."), at.End("end_turn", 2)))
	if st, reason := k.send(t, "three"); st != "completed" {
		t.Fatalf("third turn %s: %s", st, reason)
	}
	last := k.fake.Requests()[len(k.fake.Requests())-1]
	if k.body(t, -1)["model"] != claude || !strings.Contains(string(last.Body), sig) {
		t.Fatalf("third turn not on the primary with its state: model %v", k.body(t, -1)["model"])
	}
}
