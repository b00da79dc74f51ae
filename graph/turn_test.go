package graph_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

func TestPlainReply(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.TextStream(testModel, "Hello", ", ", "world"))
	if r := k.send(t, sid, "hi there"); !r.SendMessage.TurnStarted || r.SendMessage.QueueItem != nil {
		t.Fatalf("send = %+v", r)
	}
	var deltas []string
	for {
		ev := <-w.ch
		if ev.Type == core.EventMessageDelta {
			var p core.DeltaPayload
			ev.Decode(&p)
			deltas = append(deltas, p.Text)
			if ev.Seq != 0 {
				t.Fatal("a delta has a seq")
			}
		}
		if ev.Type == core.EventTurnFinished {
			var p core.TurnPayload
			ev.Decode(&p)
			if p.Status != core.TurnCompleted {
				t.Fatalf("turn %+v", p)
			}
			break
		}
	}
	if strings.Join(deltas, "") != "Hello, world" {
		t.Fatalf("deltas %q", deltas)
	}
	msgs := k.messages(t, sid)
	if len(msgs) != 2 || msgs[0].Role != "USER" || msgs[1].Text != "Hello, world" || deref(msgs[1].TurnStatus) != "COMPLETED" || len(msgs[1].Segments) != 1 {
		t.Fatalf("messages %+v", msgs)
	}
	// The request: system prompt (never stored), then the user message; usage asked for.
	req := k.fake.Requests()[0]
	var body map[string]any
	json.Unmarshal(req.Body, &body)
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true || body["model"] != testModel {
		t.Fatalf("request %s", req.Body)
	}
	rm := k.requestMessages(t, 0)
	if len(rm) != 2 || rm[0]["role"] != "system" || rm[1]["role"] != "user" || rm[1]["content"] != "hi there" {
		t.Fatalf("request messages %+v", rm)
	}
	if !contains(rm[0]["content"].(string), "working directory") {
		t.Fatalf("system prompt lacks the environment: %v", rm[0]["content"])
	}
	// Usage: event, session total, ledger total; phase back to idle.
	var s struct {
		Session struct {
			Phase string
			Usage struct{ InputTokens, OutputTokens, TotalTokens int }
		}
		UsageTotals struct{ TotalTokens int }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { phase usage { inputTokens outputTokens totalTokens } } usageTotals { totalTokens } }`, map[string]any{"s": sid}, &s)
	if s.Session.Phase != "IDLE" || s.Session.Usage.InputTokens != 10 || s.Session.Usage.OutputTokens != 3 || s.UsageTotals.TotalTokens != 13 {
		t.Fatalf("after the turn: %+v", s)
	}
}

func TestReasoningIsNotSentBack(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(map[string]any{"role": "assistant", "reasoning_content": "Let me think"}, ""),
		chunk(map[string]any{"reasoning_content": " carefully."}, ""),
		chunk(map[string]any{"content": "42"}, ""),
		chunk(map[string]any{}, "stop"),
		openaitest.UsageChunk(testModel, 20, 5, 8),
	}})
	k.send(t, sid, "question")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	msgs := k.messages(t, sid)
	if deref(msgs[1].Reasoning) != "Let me think carefully." || msgs[1].Text != "42" || len(msgs[1].Segments) != 2 || msgs[1].Segments[0].Kind != "reasoning" {
		t.Fatalf("assistant %+v", msgs[1])
	}
	k.fake.Enqueue(openaitest.TextStream(testModel, "ok"))
	k.send(t, sid, "again")
	w.turnEnd()
	body := string(k.fake.Requests()[1].Body)
	if strings.Contains(body, "Let me think") {
		t.Fatal("reasoning of a completed message was sent back")
	}
	var u struct {
		Session struct{ Usage struct{ CachedTokens int } }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { usage { cachedTokens } } }`, map[string]any{"s": sid}, &u)
	if u.Session.Usage.CachedTokens != 8 {
		t.Fatalf("cached tokens %d", u.Session.Usage.CachedTokens)
	}
}

func TestParallelToolCalls(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	// Two interleaved tool calls with split arguments, then the final answer.
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(map[string]any{"role": "assistant", "content": "Checking."}, ""),
		chunk(toolCallDelta(0, "call_a", "lookup", ""), ""),
		chunk(toolCallDelta(1, "call_b", "lookup", "{\"q\":"), ""),
		chunk(toolCallDelta(0, "", "", "{\"q\": \"al"), ""),
		chunk(toolCallDelta(1, "", "", "\"beta\"}"), ""),
		chunk(toolCallDelta(0, "", "", "pha\"}"), ""),
		chunk(map[string]any{}, "tool_calls"),
		openaitest.UsageChunk(testModel, 30, 12, 0),
	}}, openaitest.TextStream(testModel, "Both found."))
	k.send(t, sid, "look up alpha and beta")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	msgs := k.messages(t, sid)
	if len(msgs) != 5 {
		t.Fatalf("messages %+v", msgs)
	}
	a := msgs[1]
	if len(a.ToolCalls) != 2 || a.ToolCalls[0].ID != "call_a" || !jsonEq(a.ToolCalls[0].Input, `{"q": "alpha"}`) || a.ToolCalls[1].ID != "call_b" || len(a.Segments) != 3 {
		t.Fatalf("assistant %+v", a)
	}
	if deref(msgs[2].ToolCallID) != "call_a" || msgs[2].Text != "found: alpha" || deref(msgs[3].ToolCallID) != "call_b" || msgs[3].Text != "found: beta" {
		t.Fatalf("tool messages %+v %+v", msgs[2], msgs[3])
	}
	if msgs[4].Text != "Both found." {
		t.Fatalf("final %+v", msgs[4])
	}
	rm := k.requestMessages(t, 1)
	if len(rm) != 5 || rm[2]["role"] != "assistant" || rm[3]["tool_call_id"] != "call_a" || rm[4]["tool_call_id"] != "call_b" {
		t.Fatalf("second request %+v", rm)
	}
}

func TestToolErrorsReachTheModel(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "call_f", "fail", "{}"), ""),
		chunk(toolCallDelta(1, "call_u", "teleport", "{}"), ""),
		chunk(toolCallDelta(2, "call_j", "lookup", "{not json"), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "Sorry."))
	k.send(t, sid, "try things")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	msgs := k.messages(t, sid)
	if len(msgs) != 6 {
		t.Fatalf("messages %+v", msgs)
	}
	for i, want := range []string{"exploded", "unknown tool \"teleport\"", "not valid JSON"} {
		m := msgs[2+i]
		if m.Role != "TOOL" || !m.IsError || !strings.Contains(m.Text, want) {
			t.Fatalf("tool message %d = %+v, want error with %q", i, m, want)
		}
	}
	// Usage was estimated for the step without a usage chunk.
	var u struct {
		Session struct{ Usage struct{ Estimated bool } }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { usage { estimated } } }`, map[string]any{"s": sid}, &u)
	if !u.Session.Usage.Estimated {
		t.Fatal("missing usage not marked estimated")
	}
}

func jsonEq(a json.RawMessage, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

// A tool whose plugin cannot run the call yields an error tool message and
// the turn goes on.
func TestBrokenToolDoesNotEndTheTurn(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_b", "broken", `{}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "That tool is down."))
	k.send(t, sid, "use the broken tool")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	msgs := k.messages(t, sid)
	if tool := msgs[2]; !tool.IsError || !strings.Contains(tool.Text, "could not run") {
		t.Fatalf("tool message %+v", tool)
	}
	if msgs[3].Text != "That tool is down." {
		t.Fatalf("final %+v", msgs[3])
	}
}

// Provider options reach the provider: here the output limit field.
func TestConnectionOptionsReachTheProvider(t *testing.T) {
	k := newTestKernel(t)
	var c struct {
		CreateConnection struct {
			ID      string
			Options []struct{ Key, Value string }
		}
	}
	k.mustDo(t, `mutation($u: String) { createConnection(input: {name: "opt", baseUrl: $u, models: [{id: "gpt-t", capabilities: {maxOutputTokens: 777}}], options: [{key: "max_tokens_field", value: "max_completion_tokens"}]}) { id options { key value } } }`,
		map[string]any{"u": k.fake.BaseURL()}, &c)
	if len(c.CreateConnection.Options) != 1 || c.CreateConnection.Options[0].Value != "max_completion_tokens" {
		t.Fatalf("options %+v", c.CreateConnection.Options)
	}
	k.mustFail(t, "BAD_INPUT", `mutation($id: ID!) { updateConnection(id: $id, input: {options: [{key: "Bad Key", value: "x"}]}) { id } }`, map[string]any{"id": c.CreateConnection.ID})
	var s struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation($c: ID) { createSession(input: {connectionId: $c, title: "o"}) { id } }`, map[string]any{"c": c.CreateConnection.ID}, &s)
	w := k.watch(t, s.CreateSession.ID)
	k.fake.Enqueue(openaitest.TextStream(testModel, "ok"))
	k.send(t, s.CreateSession.ID, "hi")
	w.turnEnd()
	body := string(k.fake.LastRequest().Body)
	if !strings.Contains(body, `"max_completion_tokens":777`) || strings.Contains(body, `"max_tokens"`) {
		t.Fatalf("request %s", body)
	}
}

// A model that never stops calling tools is ended by the max-steps guard
// (8 in the test kernel).
func TestMaxStepsGuard(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	for i := range 9 {
		k.fake.Enqueue(openaitest.Response{Events: []string{
			chunk(toolCallDelta(0, fmt.Sprint("c", i), "lookup", `{"q":"again"}`), ""),
			chunk(map[string]any{}, "tool_calls"),
		}})
	}
	k.send(t, sid, "loop forever")
	p := w.turnEnd()
	if p.Status != core.TurnFailed || !strings.Contains(p.Reason, "max-steps") {
		t.Fatalf("turn %+v", p)
	}
	if n := len(k.fake.Requests()); n != 8 {
		t.Fatalf("%d model requests, want 8", n)
	}
}

// web_search is offered only to a model that declares it, and answers
// through the provider's native search (the Responses API here).
func TestWebSearchTool(t *testing.T) {
	k := newTestKernel(t)
	plain := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, plain)
	k.fake.Enqueue(openaitest.TextStream(testModel, "no search"))
	k.send(t, plain, "hi")
	w.turnEnd()
	if strings.Contains(string(k.fake.LastRequest().Body), `"web_search"`) {
		t.Fatal("web_search offered to a model that does not declare it")
	}

	var c struct{ CreateConnection struct{ ID string } }
	k.mustDo(t, `mutation($u: String) { createConnection(input: {name: "search", baseUrl: $u, models: [{id: "gpt-t", capabilities: {webSearch: true}}], options: [{key: "web_search", value: "responses"}]}) { id } }`,
		map[string]any{"u": k.fake.BaseURL()}, &c)
	var s struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation($c: ID) { createSession(input: {connectionId: $c, title: "s", approvalMode: BYPASS}) { id } }`, map[string]any{"c": c.CreateConnection.ID}, &s)
	sid := s.CreateSession.ID
	w = k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_ws", "web_search", `{"query":"latest Go release"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.Response{Body: `{"id":"resp_1","model":"gpt-t","output":[{"type":"message","content":[{"type":"output_text","text":"Go 1.26 is the latest.","annotations":[{"type":"url_citation","url":"https://go.dev/doc/devel/release","title":"Release History"}]}]}],"usage":{"input_tokens":12,"output_tokens":7,"total_tokens":19}}`},
		openaitest.TextStream(testModel, "It is Go 1.26."))
	k.send(t, sid, "what is the latest Go?")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	msgs := k.messages(t, sid)
	if tool := msgs[2]; tool.IsError || !strings.Contains(tool.Text, "Go 1.26 is the latest.") || !strings.Contains(tool.Text, "https://go.dev/doc/devel/release") {
		t.Fatalf("web_search result %+v", tool)
	}
	reqs := k.fake.Requests()
	if r := reqs[len(reqs)-2]; r.Path != "/v1/responses" {
		t.Fatalf("search went to %s", r.Path)
	}
}

// An endpoint that echoes the key in an error body does not get it into the
// event log.
func TestKeyEchoedByEndpointIsScrubbed(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS") // key "sk-fake"
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Error(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-fake. You can find your API key at …"))
	k.send(t, sid, "hi")
	p := w.turnEnd()
	if p.Status != core.TurnFailed || !strings.HasPrefix(p.Reason, "auth:") || strings.Contains(p.Reason, "sk-fake") {
		t.Fatalf("turn %+v", p)
	}
}

// An endpoint that echoes the key with its case changed (some gateways
// upper-case what they quote) does not get it into the event log either.
func TestCaseChangedKeyEchoIsScrubbed(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS") // key "sk-fake"
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Error(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: SK-FAKE (also seen as Sk-Fake)."))
	k.send(t, sid, "hi")
	p := w.turnEnd()
	if p.Status != core.TurnFailed || strings.Contains(strings.ToLower(p.Reason), "sk-fake") || !strings.Contains(p.Reason, "[redacted]") {
		t.Fatalf("turn %+v", p)
	}
}
