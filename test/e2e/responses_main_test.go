package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
	rt "github.com/foya-dev/foya/providers/responses/responsestest"
)

func openaitestResponse(body string) openaitest.Response { return openaitest.Response{Body: body} }

const codex = "gpt-5-codex"

// inputItems decodes the input items of a Responses request body.
func inputItems(t *testing.T, b map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, it := range b["input"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// The Responses provider, out of process, driven end to end through
// GraphQL against a fake speaking the Responses streaming format.
func TestResponsesEndToEnd(t *testing.T) {
	t.Parallel()
	model := map[string]any{"id": codex, "capabilities": map[string]any{"contextWindow": 400000, "maxOutputTokens": 64000, "reasoningEfforts": []any{"low", "medium", "high"}}}
	k := startNative(t, "openai-responses", "", model, "high")
	// startNative used the server root; the Responses base URL ends in /v1.
	k.updateConnection(t, k.conn, client.ConnectionInput{BaseUrl: ptr(k.fake.URL + "/v1")})
	k.updateSession(t, k.sid, client.UpdateSessionInput{ConnectionId: ptr(k.conn), Model: ptr(codex)})

	// 1. A plain reply, stateless.
	k.fake.Enqueue(rt.Stream(rt.Created(codex), rt.Message(0, "msg_1", "Hel", "lo"), rt.Completed(codex, rt.Usage{Input: 100, Output: 5})))
	if st, reason := k.send(t, "hi"); st != "completed" {
		t.Fatalf("plain turn %s: %s", st, reason)
	}
	req := k.fake.Requests()[0]
	b := req.JSON()
	if req.Path != "/v1/responses" || req.Header.Get("Authorization") != "Bearer sk-ant-test-SECRET" {
		t.Fatalf("request %s auth %v", req.Path, req.Header.Get("Authorization") != "")
	}
	if b["store"] != false || b["stream"] != true || !strings.HasPrefix(b["instructions"].(string), "You are Foya") ||
		!jsonEqual(b["include"], []any{"reasoning.encrypted_content"}) || !jsonEqual(b["reasoning"], map[string]any{"effort": "high", "summary": "auto"}) {
		t.Fatalf("body %s", req.Body)
	}
	in := inputItems(t, b)
	if len(in) != 1 || in[0]["role"] != "user" || !jsonEqual(in[0]["content"], []any{map[string]any{"type": "input_text", "text": "hi"}}) {
		t.Fatalf("input %v", in)
	}

	// 2. Reasoning + function call + tool result continuation: the
	// encrypted reasoning item goes back unchanged, before the call.
	const enc = "gAAAAABpEncryptedReasoning+/=="
	k.fake.Enqueue(
		rt.Stream(rt.Created(codex),
			rt.Reasoning(0, "rs_01", enc, "Looking for Go files.", "Using glob."),
			rt.FunctionCall(1, "fc_01", "call_01", "glob", `{"pat`, `tern": "**/*`, `.go"}`),
			rt.Completed(codex, rt.Usage{Input: 200, Cached: 100, Output: 30})),
		rt.Stream(rt.Created(codex), rt.Message(0, "msg_2", "No Go files."), rt.Completed(codex, rt.Usage{Input: 300, Cached: 250, Output: 4})),
	)
	if st, reason := k.send(t, "list the go files"); st != "completed" {
		t.Fatalf("tool turn %s: %s", st, reason)
	}
	in = inputItems(t, k.body(t, 2))
	// user hi, assistant Hello, user list, reasoning, function_call, output
	if len(in) != 6 {
		t.Fatalf("continuation input %v", in)
	}
	sent, _ := json.Marshal(rt.ReasoningItem("rs_01", enc, "Looking for Go files.", "Using glob.")) // as the fake streamed it
	if !jsonEqual(in[3], rt.ReasoningItem("rs_01", enc, "Looking for Go files.", "Using glob.")) || !strings.Contains(string(k.fake.Requests()[2].Body), string(sent)) {
		t.Fatalf("reasoning item not replayed byte for byte: %v", in[3])
	}
	if in[1]["role"] != "assistant" || in[4]["type"] != "function_call" || in[4]["call_id"] != "call_01" || in[4]["name"] != "glob" ||
		in[5]["type"] != "function_call_output" || in[5]["call_id"] != "call_01" {
		t.Fatalf("continuation input %v", in)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(in[4]["arguments"].(string)), &args); err != nil || args["pattern"] != "**/*.go" {
		t.Fatalf("arguments %v", in[4]["arguments"])
	}
	sess := k.sessionDetail(t, k.sid)
	if u := sess.Session.Usage; u.CachedTokens != 350 || u.InputTokens != 600 {
		t.Fatalf("usage %+v", u)
	}
	found := false
	for _, m := range sess.Session.Messages {
		found = found || m.Reasoning == "Looking for Go files.\n\nUsing glob."
	}
	if !found {
		t.Fatalf("reasoning summary not shown: %+v", sess.Session.Messages)
	}
	for _, e := range k.events(t) {
		if strings.Contains(string(e.Payload), enc) {
			t.Fatalf("encrypted reasoning shown to clients in %s", e.Type)
		}
	}

	// 3. Errors are classified and never compact.
	k.fake.Enqueue(rt.Error(429, "requests", "rate_limit_exceeded", "Rate limit reached for requests", http.Header{"Retry-After": {"3"}}))
	if st, reason := k.send(t, "again"); st != "failed" || !strings.HasPrefix(reason, "rate_limit: ") || !strings.Contains(reason, "retry after 3s") {
		t.Fatalf("rate limit: %s %q", st, reason)
	}
	k.fake.Enqueue(rt.Error(503, "server_error", "server_is_overloaded", "The server is overloaded, please try again later.", nil))
	if st, reason := k.send(t, "again"); st != "failed" || !strings.HasPrefix(reason, "throttling: ") {
		t.Fatalf("overload: %s %q", st, reason)
	}
	k.fake.Enqueue(rt.Stream(rt.Created(codex), rt.Failed(codex, "server_error", "The model failed to generate a response.")))
	if st, reason := k.send(t, "again"); st != "failed" || !strings.HasPrefix(reason, "server: ") {
		t.Fatalf("failed response: %s %q", st, reason)
	}

	// 4. Context overflow → exactly one native compaction; the retry and
	// later requests start with the compacted items.
	before := len(k.fake.Requests())
	compacted := []any{
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "hi"}}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "list the go files"}}},
		map[string]any{"type": "compaction", "id": "cmp_01", "encrypted_content": "ENC-COMPACTED-HISTORY"},
	}
	k.fake.Enqueue(
		rt.Error(400, "invalid_request_error", "context_length_exceeded", "Your input exceeds the context window of this model. Please adjust your input and try again.", nil),
		rt.Compacted(codex, compacted, rt.Usage{Input: 5000, Output: 300}),
		rt.Stream(rt.Created(codex), rt.Message(0, "msg_3", "Fits now."), rt.Completed(codex, rt.Usage{Input: 400, Output: 3})),
	)
	if st, reason := k.send(t, "continue"); st != "completed" {
		t.Fatalf("overflow turn %s: %s", st, reason)
	}
	rs := k.fake.Requests()[before:]
	if len(rs) != 3 || rs[1].Path != "/v1/responses/compact" {
		t.Fatalf("requests after overflow: %d (%v)", len(rs), rs[1].Path)
	}
	cb := rs[1].JSON()
	if cb["model"] != codex || !strings.Contains(string(rs[1].Body), enc) {
		t.Fatalf("the compaction request must carry the real items with their reasoning: %s", rs[1].Body)
	}
	in = inputItems(t, rs[2].JSON())
	if len(in) < 4 || !jsonEqual(in[:3], compacted) || strings.Contains(string(rs[2].Body), "Hello") || in[len(in)-1]["role"] != "user" {
		t.Fatalf("retry input %v", in)
	}
	checkpoints := 0
	for _, e := range k.events(t) {
		if e.Type == "compaction_checkpoint" {
			checkpoints++
			if strings.Contains(string(e.Payload), "ENC-COMPACTED") || !strings.Contains(string(e.Payload), `"native":true`) {
				t.Fatalf("checkpoint payload %s", e.Payload)
			}
		}
	}
	if checkpoints != 1 {
		t.Fatalf("%d checkpoints", checkpoints)
	}
	k.fake.Enqueue(rt.Stream(rt.Created(codex), rt.Message(0, "msg_4", "Still here."), rt.Completed(codex, rt.Usage{Input: 420, Cached: 400, Output: 3})))
	if st, reason := k.send(t, "next"); st != "completed" {
		t.Fatalf("after compaction %s: %s", st, reason)
	}
	if in = inputItems(t, k.fake.LastRequest().JSON()); !jsonEqual(in[:3], compacted) {
		t.Fatalf("the native checkpoint was not kept: %v", in)
	}

	// 5. A route change drops every native state: no reasoning item, no
	// compaction item; the history goes in full.
	other := k.createConnection(t, "openai-responses", "second", k.fake.URL+"/v1/", model)
	k.updateSession(t, k.sid, client.UpdateSessionInput{ConnectionId: ptr(other), Model: ptr(codex)})
	k.fake.Enqueue(rt.Stream(rt.Created(codex), rt.Message(0, "msg_5", "ok"), rt.Completed(codex, rt.Usage{Input: 900, Output: 1})))
	if st, reason := k.send(t, "on another route"); st != "completed" {
		t.Fatalf("route change turn %s: %s", st, reason)
	}
	last := string(k.fake.LastRequest().Body)
	if strings.Contains(last, enc) || strings.Contains(last, "ENC-COMPACTED") || strings.Contains(last, `"type":"reasoning"`) || !strings.Contains(last, "Hello") {
		t.Fatalf("native state crossed routes: %s", last)
	}
}

// An endpoint without /responses/compact gets the portable checkpoint.
func TestResponsesCompactionFallsBackToPortable(t *testing.T) {
	t.Parallel()
	model := map[string]any{"id": "gpt-4.1", "capabilities": map[string]any{"contextWindow": 100000}}
	k := startNative(t, "openai-responses", "", model, "")
	k.updateConnection(t, k.conn, client.ConnectionInput{BaseUrl: ptr(k.fake.URL + "/v1")})
	k.updateSession(t, k.sid, client.UpdateSessionInput{ConnectionId: ptr(k.conn), Model: ptr("gpt-4.1")})
	k.fake.Enqueue(rt.Stream(rt.Created("gpt-4.1"), rt.Message(0, "msg_1", "Hello"), rt.Completed("gpt-4.1", rt.Usage{Input: 10, Output: 1})))
	if st, reason := k.send(t, "hi "+strings.Repeat("lots of context ", 200)); st != "completed" {
		t.Fatalf("%s: %s", st, reason)
	}
	if b := k.body(t, 0); b["include"] != nil || b["reasoning"] != nil {
		t.Fatalf("a non-reasoning model got reasoning fields: %v", b)
	}
	summary := `{"id":"resp_s","object":"response","model":"gpt-4.1","status":"completed","output":[{"type":"message","id":"msg_s","role":"assistant","content":[{"type":"output_text","text":"## Goal\nsay hi\n## Next step\nnone","annotations":[]}]}],"usage":{"input_tokens":50,"output_tokens":12,"total_tokens":62}}`
	k.fake.Enqueue(
		rt.Error(400, "invalid_request_error", "context_length_exceeded", "Your input exceeds the context window of this model.", nil),
		rt.Error(404, "invalid_request_error", "", "Not found", nil),
		openaitestResponse(summary),
		rt.Stream(rt.Created("gpt-4.1"), rt.Message(0, "msg_2", "ok"), rt.Completed("gpt-4.1", rt.Usage{Input: 20, Output: 1})),
	)
	if st, reason := k.send(t, "more"); st != "completed" {
		t.Fatalf("%s: %s", st, reason)
	}
	rs := k.fake.Requests()
	if rs[2].Path != "/v1/responses/compact" || rs[3].Path != "/v1/responses" || rs[3].JSON()["stream"] == true {
		t.Fatalf("paths %s %s", rs[2].Path, rs[3].Path)
	}
	retry := rs[4].JSON()
	if !strings.Contains(retry["instructions"].(string), "Context checkpoint") || strings.Contains(string(rs[4].Body), "Hello") {
		t.Fatalf("retry body %s", rs[4].Body)
	}
	for _, e := range k.events(t) {
		if e.Type == "compaction_checkpoint" && strings.Contains(string(e.Payload), `"native":true`) {
			t.Fatalf("fallback checkpoint marked native: %s", e.Payload)
		}
	}
}
