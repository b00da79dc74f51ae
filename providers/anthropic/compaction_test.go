package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// recordedCompaction is the summary of the recorded compaction answer
// (testdata/recorded/anthropic-compaction.1.json).
func recordedCompaction(t *testing.T) (raw []byte, summary string) {
	t.Helper()
	raw, err := os.ReadFile("testdata/recorded/anthropic-compaction.1.json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Content []struct{ Type, Content string }
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Content[0].Type != "compaction" {
		t.Fatalf("recording: %v %+v", err, r)
	}
	return raw, r.Content[0].Content
}

// bigHistory is a history the size estimate takes for more than the
// API's compaction trigger, ending with the model's reply.
func bigHistory() []sdk.Message {
	doc := "REFERENCE-DOCUMENT " + strings.Repeat("state management with hooks and stores; ", 6000)
	return []sdk.Message{
		{Role: sdk.RoleSystem, Content: []sdk.ContentPart{{Type: "text", Text: "You are helpful."}}},
		{Role: sdk.RoleUser, Content: []sdk.ContentPart{{Type: "text", Text: doc}}},
		{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: "toolu_1", Name: "read", Input: json.RawMessage(`{"path":"a.md"}`)}}},
		{Role: sdk.RoleTool, ToolCallID: "toolu_1", Content: []sdk.ContentPart{{Type: "text", Text: "# A"}}},
		{Role: sdk.RoleAssistant, Content: []sdk.ContentPart{{Type: "text", Text: "React uses hooks; Vue uses refs."}}},
	}
}

// The recorded answer of the real API to a compaction request: its
// compaction block is the checkpoint (state and readable summary), its
// usage the compaction and message steps summed; the request asks for the
// compact edit at the API's trigger floor, paused after the compaction,
// with the beta header beside the connection's own, without thinking, and
// ends with a user turn. The next request on the route starts with the
// compaction block (with the beta header) instead of the history.
func TestCompactContextRecorded(t *testing.T) {
	recorded, summary := recordedCompaction(t)
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Response{Body: string(recorded)})
	p := New(Config{})
	ep := sdk.Endpoint{BaseURL: fake.URL, APIKey: "sk-ant-test", Options: map[string]string{OptionBeta: "interleaved-thinking-2025-05-14"}}
	c, err := p.CompactContext(context.Background(), ep, sdk.Request{Model: "claude-opus-4-6", ReasoningEffort: "high", Messages: bigHistory()})
	if err != nil {
		t.Fatal(err)
	}
	if c.Text != summary || !strings.HasPrefix(summary, "## Summary of Conversation") {
		t.Fatalf("summary %.80q", c.Text)
	}
	if c.Usage == nil || c.Usage.InputTokens != 60385+682 || c.Usage.OutputTokens != 592+1320 || c.Usage.Model != "claude-opus-4-6" {
		t.Fatalf("usage %+v", c.Usage)
	}
	var st nativeState
	if err := json.Unmarshal(c.State, &st); err != nil || len(st.Blocks) != 1 || blockType(st.Blocks[0]) != "compaction" || !bytes.Contains(st.Blocks[0], []byte("React vs Vue.js State Management")) {
		t.Fatalf("state %.200s (%v)", c.State, err)
	}
	r := fake.LastRequest()
	if r.Path != "/v1/messages" || r.Header.Get("anthropic-beta") != "interleaved-thinking-2025-05-14,"+CompactBeta {
		t.Fatalf("request %s beta %q", r.Path, r.Header.Get("anthropic-beta"))
	}
	var body struct {
		Stream            bool
		Thinking          any
		Tools             []wireTool
		Messages          []wireMessage
		ContextManagement struct {
			Edits []struct {
				Type    string
				Trigger struct {
					Type  string
					Value int64
				}
				PauseAfterCompaction bool `json:"pause_after_compaction"`
			}
		} `json:"context_management"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	edits := body.ContextManagement.Edits
	if body.Stream || body.Thinking != nil || len(edits) != 1 || edits[0].Type != CompactEdit || edits[0].Trigger.Type != "input_tokens" || edits[0].Trigger.Value != CompactTriggerFloor || !edits[0].PauseAfterCompaction {
		t.Fatalf("compaction request %.300s", r.Body)
	}
	// The history's tool calls need their tools declared.
	if len(body.Tools) != 1 || body.Tools[0].Name != "read" {
		t.Fatalf("tools %+v", body.Tools)
	}
	// No thinking in the history: none asked for.
	if body.Thinking != nil {
		t.Fatalf("thinking %v", body.Thinking)
	}
	last := body.Messages[len(body.Messages)-1]
	if last.Role != "user" || !strings.Contains(string(httpJSON(last.Content)), compactionRequestNote) {
		t.Fatalf("last message %+v", last)
	}

	// The next request on the route: the compaction block leads.
	fake.Enqueue(openaitest.Response{SSE: true, Body: events(
		`{"type":"message_start","message":{"model":"claude-opus-4-6","usage":{"input_tokens":700}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Sure."}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`,
		`{"type":"message_stop"}`,
	)})
	out := &rec{}
	next := sdk.Request{Model: "claude-opus-4-6", State: c.State, Messages: []sdk.Message{
		{Role: sdk.RoleSystem, Content: []sdk.ContentPart{{Type: "text", Text: "You are helpful."}}},
		{Role: sdk.RoleUser, Content: []sdk.ContentPart{{Type: "text", Text: "and testing?"}}},
	}}
	if _, err := p.Stream(context.Background(), ep, next, out); err != nil || out.TextOut.String() != "Sure." {
		t.Fatalf("%v %q", err, out.TextOut.String())
	}
	r = fake.LastRequest()
	if !strings.Contains(r.Header.Get("anthropic-beta"), CompactBeta) || bytes.Contains(r.Body, []byte("REFERENCE-DOCUMENT")) {
		t.Fatalf("next request beta %q body %.300s", r.Header.Get("anthropic-beta"), r.Body)
	}
	var nb struct{ Messages []wireMessage }
	_ = json.Unmarshal(r.Body, &nb)
	var first map[string]any
	for _, m := range nb.Messages {
		if m.Role == "assistant" {
			first, _ = m.Content[0].(map[string]any)
			break
		}
	}
	if first["type"] != "compaction" || first["content"] != summary || nb.Messages[len(nb.Messages)-1].Role != "user" {
		t.Fatalf("next request messages %.400s", r.Body)
	}

	// A request without a checkpoint sends no compaction beta.
	fake.Enqueue(openaitest.Response{SSE: true, Body: events(
		`{"type":"message_start","message":{"model":"claude-opus-4-6","usage":{"input_tokens":7}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`,
		`{"type":"message_stop"}`,
	)})
	next.State = nil
	if _, err := p.Stream(context.Background(), ep, next, &rec{}); err != nil {
		t.Fatal(err)
	}
	if b := fake.LastRequest().Header.Get("anthropic-beta"); b != "interleaved-thinking-2025-05-14" {
		t.Fatalf("beta %q", b)
	}
}

func httpJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// Every case the API cannot or need not compact answers "unavailable"
// (the kernel then makes its portable checkpoint); the cases decided here
// send no request.
func TestCompactContextUnavailable(t *testing.T) {
	p := New(Config{})
	ctx := context.Background()
	small := []sdk.Message{{Role: sdk.RoleUser, Content: []sdk.ContentPart{{Type: "text", Text: "hi"}}}}
	for _, c := range []struct {
		name, model, option string
		msgs                []sdk.Message
		answer              *openaitest.Response
		want                string
	}{
		{"option off", "claude-opus-4-6", "off", bigHistory(), nil, "off for this connection"},
		{"older model", "claude-sonnet-4-5-20250929", "", bigHistory(), nil, "no server-side compaction"},
		{"haiku", "claude-haiku-4-6", "", bigHistory(), nil, "no server-side compaction"},
		{"small history", "claude-opus-4-6", "", small, nil, "under the API's 50000-token compaction trigger"},
		{"refused", "claude-sonnet-4-5", "on", bigHistory(), &openaitest.Response{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"context_management: compact_20260112 is not supported on this model"}}`}, "the API refused native compaction: context_management"},
		{"no compaction", "claude-opus-4-6", "", bigHistory(), &openaitest.Response{Body: `{"model":"claude-opus-4-6","stop_reason":"end_turn","content":[{"type":"text","text":"hello"}],"usage":{"input_tokens":45000,"output_tokens":1}}`}, `no compaction (stop reason "end_turn")`},
		{"failed compaction", "claude-opus-4-6", "", bigHistory(), &openaitest.Response{Body: `{"model":"claude-opus-4-6","stop_reason":"compaction","content":[{"type":"compaction","content":null}],"usage":{"input_tokens":0,"output_tokens":0}}`}, "no compaction"},
	} {
		fake := openaitest.New(t)
		if c.answer != nil {
			fake.Enqueue(*c.answer)
		}
		_, err := p.CompactContext(ctx, sdk.Endpoint{BaseURL: fake.URL, Options: map[string]string{OptionNativeCompaction: c.option}}, sdk.Request{Model: c.model, Messages: c.msgs})
		var e *sdk.Error
		if !errors.As(err, &e) || e.Category != sdk.CategoryUnavailable || !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: %v, want unavailable …%s…", c.name, err, c.want)
		}
		if n := len(fake.Requests()); (c.answer == nil) != (n == 0) {
			t.Errorf("%s: %d requests", c.name, n)
		}
	}
	// Other failures keep their class (a rate limit is no reason to make
	// a different checkpoint).
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Response{Status: 429, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`})
	_, err := p.CompactContext(ctx, sdk.Endpoint{BaseURL: fake.URL}, sdk.Request{Model: "claude-opus-4-6", Messages: bigHistory()})
	var e *sdk.Error
	if !errors.As(err, &e) || e.Category != sdk.CategoryRateLimit {
		t.Fatalf("rate limit: %v", err)
	}
}

func TestNativeCompactionModels(t *testing.T) {
	for model, want := range map[string]bool{
		"claude-opus-4-6": true, "claude-opus-4-7": true, "claude-opus-4-8-20261001": true, "claude-sonnet-4-6": true,
		"claude-opus-5": true, "claude-sonnet-5-20261101": true, "claude-mythos-preview": true, "claude-fable-5": true,
		"anthropic/claude-sonnet-4-6": true, "us.anthropic.claude-opus-4-6-v1": true, "anthropic/claude-opus-4.7": true, "anthropic/claude-sonnet-4.5": false,
		"claude-opus-4-5": false, "claude-sonnet-4-20250514": false, "claude-opus-4-1-20250805": false, "claude-3-7-sonnet-20250219": false,
		"claude-haiku-4-5": false, "claude-haiku-5": false, "gpt-5": false, "claude-sonnet-4": false,
	} {
		if got := nativeCompaction(model); got != want {
			t.Errorf("%s: %v, want %v", model, got, want)
		}
	}
}

// The recorded stream of a reply the API compacted first (the Vercel AI
// SDK's fixture): the text is the reply's, the compaction block is kept as
// the reply's native state (first, so that it leads the message when it
// goes back), and the usage sums the compaction and message steps.
func TestStreamRecordedCompaction(t *testing.T) {
	raw, err := os.ReadFile("testdata/recorded/anthropic-compaction.1.chunks.txt")
	if err != nil {
		t.Fatal(err)
	}
	var evs []string
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(l) != "" {
			evs = append(evs, l)
		}
	}
	out := &rec{}
	reason, err := readStream(context.Background(), strings.NewReader(events(evs...)), out)
	if err != nil || reason != "stop" {
		t.Fatalf("%v %q", err, reason)
	}
	if !strings.HasPrefix(out.TextOut.String(), "Based on the conversation history, you asked") || strings.Contains(out.TextOut.String(), "Summary of Conversation") {
		t.Fatalf("text %.120q", out.TextOut.String())
	}
	var st nativeState
	if err := json.Unmarshal(out.StateOut, &st); err != nil || len(st.Blocks) != 1 || blockType(st.Blocks[0]) != "compaction" || !bytes.Contains(st.Blocks[0], []byte(`"content":"## Summary of Conversation`)) {
		t.Fatalf("state %.200s", out.StateOut)
	}
	if u := out.Usages[len(out.Usages)-1]; u.InputTokens != 60385+612 || u.OutputTokens != 522+2819 {
		t.Fatalf("usage %+v", u)
	}
	// Sent back, the reply's message leads with its compaction block and
	// the request carries the beta header.
	body, err := buildRequest(sdk.Endpoint{}, sdk.Request{Model: "claude-opus-4-6", Messages: []sdk.Message{
		{Role: sdk.RoleUser, Content: []sdk.ContentPart{{Type: "text", Text: "summarize"}}},
		{Role: sdk.RoleAssistant, Content: []sdk.ContentPart{{Type: "text", Text: out.TextOut.String()}}, State: out.StateOut},
		{Role: sdk.RoleUser, Content: []sdk.ContentPart{{Type: "text", Text: "thanks"}}},
	}}, true)
	if err != nil || !body.compaction || blockType(body.Messages[1].Content[0].(json.RawMessage)) != "compaction" {
		t.Fatalf("%v %+v", err, body.Messages[1].Content[0])
	}
}

// FuzzCompactionAnswer feeds arbitrary bytes to the compaction answer
// parser, seeded with the recorded answer: a classified error, or a
// checkpoint with a summary, its compaction block as state and usage.
func FuzzCompactionAnswer(f *testing.F) {
	if b, err := os.ReadFile("testdata/recorded/anthropic-compaction.1.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"stop_reason":"compaction","content":[{"type":"compaction","content":"s"}],"usage":{"iterations":[{"type":"compaction","input_tokens":5,"output_tokens":1}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := parseCompaction(bytes.NewReader(body))
		if err != nil {
			var se *sdk.Error
			if !errors.As(err, &se) {
				t.Fatalf("unclassified error %T: %v", err, err)
			}
			return
		}
		var st nativeState
		if strings.TrimSpace(c.Text) == "" || c.Usage == nil || json.Unmarshal(c.State, &st) != nil || len(st.Blocks) != 1 || blockType(st.Blocks[0]) != "compaction" {
			t.Fatalf("checkpoint %+v", c)
		}
	})
}

// Short completions (titles, portable summaries) never think: on models
// that may think unasked, thinking is turned off explicitly.
func TestCompleteDisablesThinking(t *testing.T) {
	fake := openaitest.New(t)
	p := New(Config{})
	for _, c := range []struct{ model, want string }{{"claude-opus-4-7", `"thinking":{"type":"disabled"}`}, {"claude-sonnet-4-5", ""}} {
		fake.Enqueue(openaitest.Response{Body: `{"model":"m","stop_reason":"end_turn","content":[{"type":"text","text":"Title"}],"usage":{"input_tokens":3,"output_tokens":1}}`})
		got, err := p.CompleteDetailed(context.Background(), sdk.Endpoint{BaseURL: fake.URL}, sdk.Request{Model: c.model, ReasoningEffort: "high", Messages: []sdk.Message{{Role: sdk.RoleUser, Content: []sdk.ContentPart{{Type: "text", Text: "name this"}}}}})
		if err != nil || got.Text != "Title" {
			t.Fatalf("%v %+v", err, got)
		}
		body := string(fake.LastRequest().Body)
		if (c.want == "" && strings.Contains(body, `"thinking"`)) || !strings.Contains(body, c.want) {
			t.Errorf("%s: %s", c.model, body)
		}
	}
}

// Every recorded non-streamed answer of the real API (testdata/recorded/
// *.json: text, refusals, tool use, thinking, server tools, code
// execution, compaction, fallbacks) read as a short completion: its text
// is its text blocks', its finish reason the stop reason's, its usage the
// top-level figures (the compaction and message steps summed when it
// compacted), whatever other blocks it holds.
func TestCompleteRecorded(t *testing.T) {
	files, _ := filepath.Glob("testdata/recorded/*.json")
	if len(files) < 25 {
		t.Fatalf("%d recordings", len(files))
	}
	p := New(Config{})
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var want struct {
			Model      string
			StopReason string `json:"stop_reason"`
			Content    []map[string]any
			Usage      map[string]any
		}
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var text strings.Builder
		for _, b := range want.Content {
			if s, ok := b["text"].(string); ok && b["type"] == "text" {
				text.WriteString(s)
			}
		}
		n := func(m map[string]any, k string) int64 { v, _ := m[k].(float64); return int64(v) }
		in, out := n(want.Usage, "input_tokens"), n(want.Usage, "output_tokens")
		its, _ := want.Usage["iterations"].([]any)
		compacted, fallback := false, false
		var sumIn, sumOut int64
		for _, it := range its {
			m, _ := it.(map[string]any)
			switch m["type"] {
			case "fallback_message":
				fallback = true
			case "compaction", "message":
				compacted = compacted || m["type"] == "compaction"
				sumIn, sumOut = sumIn+n(m, "input_tokens"), sumOut+n(m, "output_tokens")
			}
		}
		if compacted && !fallback {
			in, out = sumIn, sumOut
		}
		in += n(want.Usage, "cache_read_input_tokens") + n(want.Usage, "cache_creation_input_tokens")

		fake := openaitest.New(t)
		fake.Enqueue(openaitest.Response{Body: string(raw)})
		got, err := p.CompleteDetailed(context.Background(), sdk.Endpoint{BaseURL: fake.URL}, sdk.Request{Model: want.Model, Messages: []sdk.Message{{Role: sdk.RoleUser, Content: []sdk.ContentPart{{Type: "text", Text: "hi"}}}}})
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if got.Text != text.String() || got.FinishReason != finishReason(want.StopReason) || got.Usage == nil || got.Usage.InputTokens != in || got.Usage.OutputTokens != out {
			t.Errorf("%s: text %.60q finish %q usage %+v; want %.60q %q in %d out %d", filepath.Base(f), got.Text, got.FinishReason, got.Usage, text.String(), finishReason(want.StopReason), in, out)
		}
	}
}

// A history with signed thinking is compacted by a request that thinks
// (at the least effort), as the turns it came from did.
func TestCompactContextWithThinking(t *testing.T) {
	recorded, _ := recordedCompaction(t)
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Response{Body: string(recorded)})
	msgs := bigHistory()
	msgs[2].State = httpJSON(nativeState{Blocks: []json.RawMessage{json.RawMessage(`{"type":"thinking","thinking":"look at a.md","signature":"c2ln"}`)}})
	if _, err := New(Config{}).CompactContext(context.Background(), sdk.Endpoint{BaseURL: fake.URL}, sdk.Request{Model: "claude-opus-4-7", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	body := string(fake.LastRequest().Body)
	if !strings.Contains(body, `"thinking":{"type":"adaptive","display":"summarized"}`) || !strings.Contains(body, `"output_config":{"effort":"low"}`) || !strings.Contains(body, `"signature":"c2ln"`) {
		t.Fatalf("%.600s", body)
	}
}

// blockType is the type of a raw content block.
func blockType(raw json.RawMessage) string {
	var b struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &b)
	return b.Type
}
