package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// PRV-4/PRV-7: a provider that declares a capability resolver is asked, and
// what it reports fills the unknown capabilities of the request.
func TestCapabilityResolverFillsUnknowns(t *testing.T) {
	k := newTestKernel(t)
	conn := k.createConn(t, map[string]any{"name": "router", "baseUrl": k.fake.BaseURL(),
		"options": []any{map[string]any{"key": "resolve_capabilities", "value": "model_endpoint"}},
		"models":  []any{map[string]any{"id": testModel, "capabilities": map[string]any{"contextWindow": 64000}}}})
	var s struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation($c: ID) { createSession(input: {connectionId: $c, title: "t", approvalMode: BYPASS}) { id } }`, map[string]any{"c": conn.ID}, &s)
	sid := s.CreateSession.ID
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Body: `{"id":"gpt-t","object":"model","context_length":128000,"top_provider":{"max_completion_tokens":321},"architecture":{"input_modalities":["text"]},"supported_parameters":["tools","temperature"]}`},
		openaitest.TextStream(testModel, "hi"), openaitest.TextStream(testModel, "again"))
	k.send(t, sid, "hello")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	k.send(t, sid, "more")
	w.turnEnd()
	reqs := k.fake.Requests()
	if len(reqs) != 3 || reqs[0].Method != "GET" || reqs[0].Path != "/v1/models/gpt-t" {
		t.Fatalf("requests %d, first %s %s (the resolver is asked once per route)", len(reqs), reqs[0].Method, reqs[0].Path)
	}
	var body map[string]any
	json.Unmarshal(reqs[1].Body, &body)
	if body["max_tokens"] != float64(321) {
		t.Fatalf("max_tokens %v: the resolved max output was not used", body["max_tokens"])
	}
}

// PRV-4: a reasoning effort must be one the model declares; a model change
// resets one the new model does not offer.
func TestReasoningEffortValidated(t *testing.T) {
	k := newTestKernel(t)
	conn := k.createConn(t, map[string]any{"name": "fake", "baseUrl": k.fake.BaseURL(), "models": []any{
		map[string]any{"id": "thinker", "capabilities": map[string]any{"reasoningEfforts": []string{"low", "high"}}},
		map[string]any{"id": "plain"},
		map[string]any{"id": "lowonly", "capabilities": map[string]any{"reasoningEfforts": []string{"low"}}},
	}})
	msg := k.mustFail(t, "BAD_INPUT", `mutation($c: ID) { createSession(input: {connectionId: $c, model: "thinker", reasoningEffort: "medium"}) { id } }`, map[string]any{"c": conn.ID})
	if !strings.Contains(msg, "low, high") {
		t.Fatalf("message %q", msg)
	}
	var s struct {
		CreateSession struct{ ID, ReasoningEffort string }
	}
	k.mustDo(t, `mutation($c: ID) { createSession(input: {connectionId: $c, model: "thinker", reasoningEffort: "high"}) { id reasoningEffort } }`, map[string]any{"c": conn.ID}, &s)
	sid := s.CreateSession.ID
	k.mustFail(t, "BAD_INPUT", `mutation($s: ID!) { updateSession(id: $s, input: {reasoningEffort: "max"}) { id } }`, map[string]any{"s": sid})
	type upd struct {
		UpdateSession struct{ Model, ReasoningEffort string }
	}
	var u upd
	// Unknown efforts (no list) accept any value.
	k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {model: "plain"}) { model reasoningEffort } }`, map[string]any{"s": sid}, &u)
	if u.UpdateSession.ReasoningEffort != "high" {
		t.Fatalf("after plain: %+v", u)
	}
	u = upd{}
	k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {model: "lowonly"}) { model reasoningEffort } }`, map[string]any{"s": sid}, &u)
	if u.UpdateSession.Model != "lowonly" || u.UpdateSession.ReasoningEffort != "" {
		t.Fatalf("after lowonly: %+v", u)
	}
	k.mustFail(t, "BAD_INPUT", `mutation($s: ID!) { updateSession(id: $s, input: {model: "thinker", reasoningEffort: "medium"}) { id } }`, map[string]any{"s": sid})
}

// Compaction output is capped by the model's max output tokens.
func TestCompactionOutputCapped(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, map[string]any{"maxInputTokens": 1000, "maxOutputTokens": 300}, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(reply(longReply, 400))
	k.send(t, sid, "first question")
	w.turnEnd()
	k.fake.Enqueue(openaitest.Completion(testModel, summary, "stop", 700, 60), reply("second answer", 300))
	k.send(t, sid, "SECOND "+strings.Repeat("with plenty of detail ", 150))
	w.turnEnd()
	reqs := k.fake.Requests()
	if len(reqs) != 3 || !isCompactionRequest(reqs[1]) {
		t.Fatalf("%d requests", len(reqs))
	}
	var body map[string]any
	json.Unmarshal(reqs[1].Body, &body)
	if body["max_tokens"] != float64(300) {
		t.Fatalf("compaction max_tokens %v", body["max_tokens"])
	}
}
