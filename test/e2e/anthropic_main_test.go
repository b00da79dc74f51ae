package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
	at "github.com/foya-dev/foya/providers/anthropic/anthropictest"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// nativeKernel is a kernel with one session on a connection of kind.
type nativeKernel struct {
	*kernelProc
	fake *openaitest.Server
	conn string
	sid  string
}

// eventJSON is one stored event of the session.
type eventJSON = client.EventsEventsSessionEvent

func (k *nativeKernel) events(t *testing.T) []eventJSON {
	t.Helper()
	return k.eventLog(t, k.sid).Events
}

// send runs one turn and returns its turn_finished payload.
func (k *nativeKernel) send(t *testing.T, text string) (status, reason string) {
	t.Helper()
	n := 0
	for _, e := range k.events(t) {
		if e.Type == "turn_finished" {
			n++
		}
	}
	k.sendMessage(t, k.sid, text)
	k.waitEvents(t, k.sid, "turn_finished", n+1)
	var last struct{ Status, Reason string }
	for _, e := range k.events(t) {
		if e.Type == "turn_finished" {
			_ = json.Unmarshal(e.Payload, &last)
		}
	}
	return last.Status, last.Reason
}

func (k *nativeKernel) createConnection(t *testing.T, kind, name, baseURL string, model map[string]any) string {
	t.Helper()
	var m client.ModelInput
	decodeAs(t, model, &m)
	return k.kernelProc.createConnection(t, client.ConnectionInput{
		Name: &name, ProviderKind: &kind, BaseUrl: &baseURL, ApiKey: ptr("sk-ant-test-SECRET"), Models: []client.ModelInput{m},
	})
}

func startNative(t *testing.T, kind, baseURL string, model map[string]any, effort string) *nativeKernel {
	t.Helper()
	fake := openaitest.New(t)
	if baseURL == "" {
		baseURL = fake.URL
	}
	// Retries off: these tests check how errors are classified (retries are
	// tested in graph/retry_test.go).
	k := &nativeKernel{kernelProc: startKernel(t, t.TempDir(), "--retry-max-attempts", "1"), fake: fake}
	k.conn = k.createConnection(t, kind, kind, baseURL, model)
	k.sid = k.createSession(t, client.CreateSessionInput{ConnectionId: ptr(k.conn), ReasoningEffort: ptr(effort), ApprovalMode: ptr(client.ApprovalModeBypass), Title: ptr("native")})
	return k
}

// body decodes the i-th request the fake received.
func (k *nativeKernel) body(t *testing.T, i int) map[string]any {
	t.Helper()
	rs := k.fake.Requests()
	if i < 0 {
		i += len(rs)
	}
	if i < 0 || i >= len(rs) {
		t.Fatalf("request %d of %d", i, len(rs))
	}
	return rs[i].JSON()
}

func blocksOf(msg any) []map[string]any {
	var out []map[string]any
	for _, b := range msg.(map[string]any)["content"].([]any) {
		out = append(out, b.(map[string]any))
	}
	return out
}

func hasCacheControl(v any) bool {
	m, ok := v.(map[string]any)
	return ok && m["cache_control"] != nil
}

const claude = "claude-sonnet-4-5"

// The Anthropic provider, out of process, driven end to end through
// GraphQL against a fake speaking the Messages streaming format.
func TestAnthropicEndToEnd(t *testing.T) {
	t.Parallel()
	model := map[string]any{"id": claude, "capabilities": map[string]any{"contextWindow": 200000, "maxOutputTokens": 32000, "reasoningEfforts": []any{"low", "medium", "high", "max"}}}
	k := startNative(t, "anthropic", "", model, "high")

	// 1. A plain reply. The first request writes the cache.
	k.fake.Enqueue(at.Stream(at.Start(claude, at.Usage{Input: 12, CacheWrite: 1500}), at.Text(0, "Hello", " there"), at.End("end_turn", 5)))
	if st, reason := k.send(t, "hi"); st != "completed" {
		t.Fatalf("plain turn %s: %s", st, reason)
	}
	req := k.fake.Requests()[0]
	if req.Path != "/v1/messages" || req.Header.Get("x-api-key") != "sk-ant-test-SECRET" || req.Header.Get("anthropic-version") != "2023-06-01" || req.Header.Get("Authorization") != "" {
		t.Fatalf("request %s %s headers %v", req.Method, req.Path, req.Header)
	}
	b := req.JSON()
	if b["model"] != claude || b["stream"] != true || b["max_tokens"].(float64) != 32000 {
		t.Fatalf("body %v", b)
	}
	th, _ := b["thinking"].(map[string]any)
	if th["type"] != "enabled" || th["budget_tokens"].(float64) != 24000 {
		t.Fatalf("thinking %v", b["thinking"])
	}
	// Cache breakpoints: last tool, system, newest message.
	sys := b["system"].([]any)
	tools := b["tools"].([]any)
	msgs := b["messages"].([]any)
	if !hasCacheControl(sys[len(sys)-1]) || !hasCacheControl(tools[len(tools)-1]) || !hasCacheControl(blocksOf(msgs[len(msgs)-1])[0]) {
		t.Fatalf("cache breakpoints missing: system %v / last tool %v / messages %v", sys, tools[len(tools)-1], msgs)
	}
	if strings.Contains(string(req.Body), `"role":"system"`) {
		t.Fatal("system prompt sent as a message")
	}

	// 2. Thinking + tool use + tool result continuation: the signed
	// thinking block and the redacted one go back unchanged.
	const sig = "EqQBCkgIARABGAIiQL+signature/with+base64=="
	k.fake.Enqueue(
		at.Stream(at.Start(claude, at.Usage{Input: 20, CacheRead: 1500}),
			at.Thinking(0, sig, "The user wants ", "a file listing."),
			at.Redacted(1, "RedactedOpaqueData=="),
			at.Text(2, "Let me look."),
			at.ToolUse(3, "toolu_01", "glob", `{"pat`, `tern": "*`, `.go"}`),
			at.End("tool_use", 40)),
		at.Stream(at.Start(claude, at.Usage{Input: 30, CacheRead: 1700, CacheWrite: 60}), at.Text(0, "No Go files."), at.End("end_turn", 4)),
	)
	if st, reason := k.send(t, "list the go files"); st != "completed" {
		t.Fatalf("tool turn %s: %s", st, reason)
	}
	cont := k.body(t, 2)
	msgs = cont["messages"].([]any)
	var assistant, results []map[string]any
	for i, m := range msgs {
		if m.(map[string]any)["role"] == "assistant" && i == len(msgs)-2 {
			assistant = blocksOf(m)
			results = blocksOf(msgs[i+1])
		}
	}
	if len(assistant) != 4 {
		t.Fatalf("assistant blocks %v in %s", assistant, k.fake.Requests()[2].Body)
	}
	wantThinking := map[string]any{"type": "thinking", "thinking": "The user wants a file listing.", "signature": sig}
	if !jsonEqual(assistant[0], wantThinking) || !jsonEqual(assistant[1], map[string]any{"type": "redacted_thinking", "data": "RedactedOpaqueData=="}) {
		t.Fatalf("thinking blocks not replayed verbatim: %v", assistant[:2])
	}
	if assistant[2]["text"] != "Let me look." || assistant[3]["type"] != "tool_use" || assistant[3]["id"] != "toolu_01" || !jsonEqual(assistant[3]["input"], map[string]any{"pattern": "*.go"}) {
		t.Fatalf("assistant blocks %v", assistant)
	}
	if results[0]["type"] != "tool_result" || results[0]["tool_use_id"] != "toolu_01" || !hasCacheControl(results[len(results)-1]) {
		t.Fatalf("tool results %v", results)
	}
	if cont["thinking"] == nil {
		t.Fatal("thinking dropped while continuing a signed tool round")
	}
	// Reasoning reached clients; the signature never did.
	sess := k.sessionDetail(t, k.sid)
	found := false
	for _, m := range sess.Session.Messages {
		found = found || m.Reasoning == "The user wants a file listing."
	}
	if !found {
		t.Fatalf("reasoning not shown: %+v", sess.Session.Messages)
	}
	// Usage: input counts cache reads and writes; cached = reads.
	if u := sess.Session.Usage; u.CachedTokens != 1500+1700 || u.CacheWriteTokens != 1500+60 || u.InputTokens != (12+1500)+(20+1500)+(30+1700+60) || u.OutputTokens != 5+40+4 {
		t.Fatalf("usage %+v", u)
	}
	for _, e := range k.events(t) {
		if strings.Contains(string(e.Payload), sig) || strings.Contains(string(e.Payload), "RedactedOpaqueData") || strings.Contains(string(e.Payload), "providerState") {
			t.Fatalf("native state shown to clients in %s: %s", e.Type, e.Payload)
		}
	}

	// 3. Overload (529) and rate limit (429 + retry-after) are classified
	// and never compact.
	k.fake.Enqueue(at.Error(529, "overloaded_error", "Overloaded", nil))
	if st, reason := k.send(t, "again"); st != "failed" || !strings.HasPrefix(reason, "throttling: Overloaded") {
		t.Fatalf("overload: %s %q", st, reason)
	}
	k.fake.Enqueue(at.Error(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", http.Header{"Retry-After": {"7"}}))
	if st, reason := k.send(t, "again"); st != "failed" || !strings.HasPrefix(reason, "rate_limit: ") || !strings.Contains(reason, "retry after 7s") {
		t.Fatalf("rate limit: %s %q", st, reason)
	}
	// An overload reported inside the stream is classified the same way.
	k.fake.Enqueue(at.Stream(at.Start(claude, at.Usage{Input: 3}), at.ErrorEvent("overloaded_error", "Overloaded")))
	if st, reason := k.send(t, "again"); st != "failed" || !strings.HasPrefix(reason, "throttling: ") {
		t.Fatalf("stream overload: %s %q", st, reason)
	}
	for _, e := range k.events(t) {
		if strings.HasPrefix(e.Type, "compaction") {
			t.Fatalf("an error other than overflow compacted: %s", e.Type)
		}
	}

	// 4. Context overflow: exactly one compaction, then the retry succeeds.
	before := len(k.fake.Requests())
	k.fake.Enqueue(
		at.Error(400, "invalid_request_error", "prompt is too long: 215000 tokens > 200000 maximum", nil),
		at.Message(claude, "## Goal\nlist files\n## Constraints and user preferences\nnone\n## Decisions\nnone\n## Work done\nlisted\n## Files touched\nnone\n## Open tasks\nnone\n## Next step\nnone", "end_turn", at.Usage{Input: 900, Output: 80}),
		at.Stream(at.Start(claude, at.Usage{Input: 50}), at.Text(0, "Fits now."), at.End("end_turn", 3)),
	)
	if st, reason := k.send(t, "continue"); st != "completed" {
		t.Fatalf("overflow turn %s: %s", st, reason)
	}
	checkpoints := 0
	for _, e := range k.events(t) {
		if e.Type == "compaction_checkpoint" {
			checkpoints++
		}
	}
	if checkpoints != 1 || len(k.fake.Requests()) != before+3 {
		t.Fatalf("%d checkpoints, %d requests", checkpoints, len(k.fake.Requests())-before)
	}
	summ := k.body(t, before+1)
	if summ["stream"] == true || summ["thinking"] != nil {
		t.Fatalf("summary request %v", summ)
	}

	// 5. A route change drops the native state; going back brings it back.
	other := k.createConnection(t, "anthropic", "second", k.fake.URL+"/v1", model)
	k.updateSession(t, k.sid, client.UpdateSessionInput{ConnectionId: ptr(other), Model: ptr(claude)})
	k.fake.Enqueue(at.Stream(at.Start(claude, at.Usage{Input: 9}), at.Text(0, "ok"), at.End("end_turn", 1)))
	if st, reason := k.send(t, "on another route"); st != "completed" {
		t.Fatalf("route change turn %s: %s", st, reason)
	}
	last := k.fake.LastRequest()
	if strings.Contains(string(last.Body), sig) || strings.Contains(string(last.Body), `"redacted_thinking"`) || strings.Contains(string(last.Body), `"type":"thinking"`) {
		t.Fatalf("native state crossed routes: %s", last.Body)
	}
	if !strings.Contains(string(last.Body), "Let me look.") {
		t.Fatal("the checkpoint of the first route was used on the second")
	}

	// 6. The model list: GET /v1/models, capabilities completed per family.
	k.fake.Enqueue(openaitest.Response{Body: `{"data":[{"type":"model","id":"claude-opus-4-5-20251101","display_name":"Claude Opus 4.5","created_at":"2025-11-01T00:00:00Z"},{"type":"model","id":"claude-3-5-haiku-20241022","display_name":"Claude Haiku 3.5","created_at":"2024-10-22T00:00:00Z"}],"has_more":false,"first_id":"claude-opus-4-5-20251101","last_id":"claude-3-5-haiku-20241022"}`})
	rf := k.refreshModels(t, other)
	ms := rf.RefreshModels.Models
	if r := k.fake.LastRequest(); r.Path != "/v1/models" || r.Header.Get("x-api-key") == "" {
		t.Fatalf("model list request %s", r.Path)
	}
	if len(ms) != 2 || ms[0].Id != "claude-opus-4-5-20251101" || *ms[0].Capabilities.ContextWindow != 200000 || *ms[0].Capabilities.MaxOutputTokens != 64000 ||
		!*ms[0].Capabilities.ImageInput || len(ms[0].Capabilities.ReasoningEfforts) != 4 || len(ms[1].Capabilities.ReasoningEfforts) != 0 {
		t.Fatalf("models %+v", ms)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Thinking blocks go back on later user turns of the same route, and a
// rewind past the reply that carried them leaves them behind.
func TestAnthropicStateAcrossTurnsAndRewind(t *testing.T) {
	t.Parallel()
	model := map[string]any{"id": claude, "capabilities": map[string]any{"maxOutputTokens": 16000, "reasoningEfforts": []any{"low"}}}
	k := startNative(t, "anthropic", "", model, "low")
	const sig = "SigOfTurnOne=="
	k.fake.Enqueue(
		at.Stream(at.Start(claude, at.Usage{Input: 5}), at.Thinking(0, sig, "Greeting <back>."), at.Text(1, "Hi!"), at.End("end_turn", 3)),
		at.Stream(at.Start(claude, at.Usage{Input: 9}), at.Text(0, "Sure."), at.End("end_turn", 2)),
	)
	if st, reason := k.send(t, "hello"); st != "completed" {
		t.Fatalf("%s: %s", st, reason)
	}
	if st, reason := k.send(t, "second"); st != "completed" {
		t.Fatalf("%s: %s", st, reason)
	}
	body := string(k.fake.Requests()[1].Body)
	if !strings.Contains(body, `{"type":"thinking","thinking":"Greeting <back>.","signature":"`+sig+`"}`) {
		t.Fatalf("thinking block not replayed byte for byte on the next turn: %s", body)
	}
	// Rewind to the first user message: the reply with the state is gone.
	ev := k.eventLog(t, k.sid)
	first := 0
	for _, e := range ev.Events {
		if e.Type == "message_end" && strings.Contains(string(e.Payload), `"role":"user"`) {
			first = e.Seq
			break
		}
	}
	k.rewindTo(t, k.sid, first)
	k.fake.Enqueue(at.Stream(at.Start(claude, at.Usage{Input: 4}), at.Text(0, "Again."), at.End("end_turn", 1)))
	if st, reason := k.send(t, "fresh start"); st != "completed" {
		t.Fatalf("%s: %s", st, reason)
	}
	last := string(k.fake.LastRequest().Body)
	if strings.Contains(last, sig) || strings.Contains(last, "Hi!") {
		t.Fatalf("rewound state replayed: %s", last)
	}
}

// A Claude model that declares web search answers the kernel's web_search
// tool with Anthropic's own search server tool, through the plugin process:
// the recorded answer of the real API (providers/anthropic/testdata) becomes
// the tool's result, with its cited sources, and its usage is counted.
func TestAnthropicNativeWebSearch(t *testing.T) {
	t.Parallel()
	rec, err := os.ReadFile(repoPath("providers", "anthropic", "testdata", "recorded", "anthropic-web-search-tool.1.json"))
	if err != nil {
		t.Fatal(err)
	}
	model := map[string]any{"id": claude, "capabilities": map[string]any{"contextWindow": 200000, "maxOutputTokens": 32000, "webSearch": true}}
	k := startNative(t, "anthropic", "", model, "")
	k.fake.Enqueue(
		at.Stream(at.Start(claude, at.Usage{Input: 20}), at.ToolUse(0, "toolu_ws", "web_search", `{"query":"tech news today"}`), at.End("tool_use", 9)),
		openaitest.Response{Body: string(rec)},
		at.Stream(at.Start(claude, at.Usage{Input: 40}), at.Text(0, "Ellison was sentenced."), at.End("end_turn", 4)),
	)
	if st, reason := k.send(t, "what happened in tech today?"); st != "completed" {
		t.Fatalf("turn %s: %s", st, reason)
	}
	reqs := k.fake.Requests()
	if !strings.Contains(string(reqs[0].Body), `"name":"web_search"`) {
		t.Fatalf("web_search not offered: %.300s", reqs[0].Body)
	}
	search := reqs[1].JSON()
	if tools, _ := search["tools"].([]any); len(tools) != 1 || tools[0].(map[string]any)["type"] != "web_search_20250305" || search["model"] != claude {
		t.Fatalf("search request %s", reqs[1].Body)
	}
	var tool string
	for _, m := range k.getSession(t, k.sid).Session.Messages {
		if m.Role == "TOOL" {
			tool = m.Text
		}
	}
	if !strings.Contains(tool, "sentenced to two years in prison") || !strings.Contains(tool, "https://acecomments.mu.nu/?post=411647") {
		t.Fatalf("tool result %.500s", tool)
	}
	if !strings.Contains(string(reqs[2].Body), "sentenced to two years") {
		t.Fatal("the search answer did not reach the model")
	}
	if u := k.sessionDetail(t, k.sid).Session.Usage; u.InputTokens < 27118+20+40 {
		t.Fatalf("the search's usage is not the session's: %+v", u)
	}
}

// A Claude model with server-side compaction makes the kernel's checkpoint
// through the API, through the plugin process: compactSession sends the
// covered history with the compact edit and the beta header, the recorded
// answer of the real API (providers/anthropic/testdata) becomes a native
// checkpoint whose summary is the compaction's, the next request starts
// with the compaction block instead of the history, and a route change
// drops it.
func TestAnthropicNativeCompaction(t *testing.T) {
	t.Parallel()
	rec, err := os.ReadFile(repoPath("providers", "anthropic", "testdata", "recorded", "anthropic-compaction.1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var recorded struct {
		Content []struct{ Type, Content string }
	}
	if err := json.Unmarshal(rec, &recorded); err != nil {
		t.Fatal(err)
	}
	summary := recorded.Content[0].Content
	const opus = "claude-opus-4-6"
	model := map[string]any{"id": opus, "capabilities": map[string]any{"contextWindow": 1000000, "maxOutputTokens": 32000}}
	k := startNative(t, "anthropic", "", model, "")
	doc := "REFERENCE-DOC " + strings.Repeat("React hooks, Vue refs, Docker layers, SQL joins. ", 5000)
	k.fake.Enqueue(
		at.Stream(at.Start(opus, at.Usage{Input: 60000}), at.Text(0, "Read it."), at.End("end_turn", 3)),
		at.Stream(at.Start(opus, at.Usage{Input: 60010}), at.Text(0, "Hooks and refs."), at.End("end_turn", 4)),
	)
	for _, text := range []string{doc, "compare state management"} {
		if st, reason := k.send(t, text); st != "completed" {
			t.Fatalf("%s: %s", st, reason)
		}
	}
	before := len(k.fake.Requests())
	k.fake.Enqueue(openaitest.Response{Body: string(rec)})
	if _, err := client.CompactSession(t.Context(), k.client(), k.sid); err != nil {
		t.Fatalf("compactSession: %v", err)
	}
	rs := k.fake.Requests()
	if len(rs) != before+1 {
		t.Fatalf("%d requests for the compaction", len(rs)-before)
	}
	cr := rs[before]
	cm, _ := cr.JSON()["context_management"].(map[string]any)
	edits, _ := cm["edits"].([]any)
	if len(edits) != 1 || !strings.Contains(cr.Header.Get("anthropic-beta"), "compact-2026-01-12") || cr.JSON()["stream"] == true ||
		!strings.Contains(string(cr.Body), "REFERENCE-DOC") || strings.Contains(string(cr.Body), "compare state management") {
		t.Fatalf("compaction request beta %q: %.400s", cr.Header.Get("anthropic-beta"), cr.Body)
	}
	if e := edits[0].(map[string]any); e["type"] != "compact_20260112" || e["pause_after_compaction"] != true {
		t.Fatalf("edit %v", e)
	}
	var cp struct {
		Native  bool
		Summary string
	}
	for _, e := range k.events(t) {
		if e.Type == "compaction_checkpoint" {
			_ = json.Unmarshal(e.Payload, &cp)
			if strings.Contains(string(e.Payload), "providerState") {
				t.Fatalf("native state shown to clients: %.300s", e.Payload)
			}
		}
	}
	if !cp.Native || cp.Summary != summary {
		t.Fatalf("checkpoint native %v summary %.100q", cp.Native, cp.Summary)
	}
	// The compaction's usage is counted: both of its steps.
	var compactionUsage bool
	for _, e := range k.events(t) {
		compactionUsage = compactionUsage || (e.Type == "usage" && strings.Contains(string(e.Payload), `"inputTokens":61067`) && strings.Contains(string(e.Payload), `"outputTokens":1912`))
	}
	if !compactionUsage {
		t.Fatal("no usage event for the compaction")
	}

	// The next turn starts from the compaction block.
	k.fake.Enqueue(at.Stream(at.Start(opus, at.Usage{Input: 700}), at.Text(0, "Testing next."), at.End("end_turn", 3)))
	if st, reason := k.send(t, "and testing?"); st != "completed" {
		t.Fatalf("%s: %s", st, reason)
	}
	next := k.fake.LastRequest()
	var first map[string]any
	for _, m := range next.JSON()["messages"].([]any) {
		if m.(map[string]any)["role"] == "assistant" {
			first = blocksOf(m)[0]
			break
		}
	}
	if first["type"] != "compaction" || first["content"] != summary || !strings.Contains(next.Header.Get("anthropic-beta"), "compact-2026-01-12") ||
		strings.Contains(string(next.Body), "REFERENCE-DOC") || !strings.Contains(string(next.Body), "compare state management") {
		t.Fatalf("request after the checkpoint: beta %q %.600s", next.Header.Get("anthropic-beta"), next.Body)
	}

	// Another route: no compaction block, no beta; the history goes in
	// full, as after any native checkpoint.
	other := k.createConnection(t, "anthropic", "second", k.fake.URL+"/v1", model)
	k.updateSession(t, k.sid, client.UpdateSessionInput{ConnectionId: ptr(other), Model: ptr(opus)})
	k.fake.Enqueue(at.Stream(at.Start(opus, at.Usage{Input: 900}), at.Text(0, "ok"), at.End("end_turn", 1)))
	if st, reason := k.send(t, "on another route"); st != "completed" {
		t.Fatalf("%s: %s", st, reason)
	}
	last := k.fake.LastRequest()
	if strings.Contains(string(last.Body), `"type":"compaction"`) || last.Header.Get("anthropic-beta") != "" || !strings.Contains(string(last.Body), "REFERENCE-DOC") {
		t.Fatalf("request on another route: beta %q %.600s", last.Header.Get("anthropic-beta"), last.Body)
	}
}

// Claude Opus 4.7 thinks adaptively through the plugin: the session's
// effort goes as output_config.effort with thinking {type: adaptive,
// display: summarized} and no budget_tokens (which that model refuses);
// its summarized thinking reaches clients as reasoning, and the signed
// block goes back on the tool round's next request.
func TestAnthropicAdaptiveThinking(t *testing.T) {
	t.Parallel()
	const opus = "claude-opus-4-7"
	model := map[string]any{"id": opus, "capabilities": map[string]any{"contextWindow": 1000000, "maxOutputTokens": 128000, "reasoningEfforts": []any{"low", "medium", "high", "max", "xhigh"}}}
	k := startNative(t, "anthropic", "", model, "xhigh")
	const sig = "AdaptiveSig=="
	k.fake.Enqueue(
		at.Stream(at.Start(opus, at.Usage{Input: 20}), at.Thinking(0, sig, "Need the file list."), at.ToolUse(1, "toolu_a", "glob", `{"pattern":"*.go"}`), at.End("tool_use", 30)),
		at.Stream(at.Start(opus, at.Usage{Input: 40}), at.Text(0, "None."), at.End("end_turn", 2)),
	)
	if st, reason := k.send(t, "list the go files"); st != "completed" {
		t.Fatalf("%s: %s", st, reason)
	}
	for i := 0; i < 2; i++ {
		b := k.body(t, i)
		th, _ := b["thinking"].(map[string]any)
		oc, _ := b["output_config"].(map[string]any)
		if th["type"] != "adaptive" || th["display"] != "summarized" || th["budget_tokens"] != nil || oc["effort"] != "xhigh" || b["max_tokens"].(float64) != 128000 {
			t.Fatalf("request %d: thinking %v output_config %v max_tokens %v", i, b["thinking"], b["output_config"], b["max_tokens"])
		}
	}
	if !strings.Contains(string(k.fake.Requests()[1].Body), `{"type":"thinking","thinking":"Need the file list.","signature":"`+sig+`"}`) {
		t.Fatalf("signed thinking not replayed: %s", k.fake.Requests()[1].Body)
	}
	found := false
	for _, m := range k.sessionDetail(t, k.sid).Session.Messages {
		found = found || m.Reasoning == "Need the file list."
	}
	if !found {
		t.Fatal("the summarized thinking did not reach clients")
	}
}
