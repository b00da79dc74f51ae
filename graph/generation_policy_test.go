package graph_test

import (
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// PRV-2: the generation flags decide use (false refuses naming the flag,
// unknown is allowed); generateImage without a session is still spent in
// the kernel's ledger; image_generation asks wherever a write would.
func TestGenerationFlagsLedgerAndApproval(t *testing.T) {
	k := newTestKernel(t)
	const gen = `mutation($in: GenerateImageInput!) { generateImage(input: $in) { id } }`
	img := k.createConn(t, map[string]any{"name": "painter", "type": "IMAGE", "baseUrl": k.fake.BaseURL(), "apiKey": "sk-img", "models": []any{
		map[string]any{"id": "no-images", "capabilities": map[string]any{"generation": map[string]any{"image": false}}},
		map[string]any{"id": "gpt-image-1", "capabilities": map[string]any{"generation": map[string]any{"image": true}, "prices": map[string]any{"inputPerMillion": 5, "outputPerMillion": 40}}},
		map[string]any{"id": "unknown"},
	}}).ID
	before := len(k.fake.Requests())
	msg := k.mustFail(t, "BAD_INPUT", gen, map[string]any{"in": map[string]any{"prompt": "a fox", "connectionId": img, "model": "no-images"}})
	if !strings.Contains(msg, "capabilities.generation.image false") || len(k.fake.Requests()) != before {
		t.Fatalf("message %q, %d requests", msg, len(k.fake.Requests())-before)
	}
	k.fake.Enqueue(imagesResponse(t, 1))
	k.mustDo(t, gen, map[string]any{"in": map[string]any{"prompt": "a fox", "connectionId": img, "model": "unknown"}}, nil)

	// Standalone generation (no sessionId) lands in usageTotals.
	type totals struct {
		UsageTotals struct {
			TotalTokens int
			Cost        *float64
		}
	}
	var t0, t1 totals
	k.mustDo(t, `{ usageTotals { totalTokens cost } }`, nil, &t0)
	k.fake.Enqueue(imagesResponse(t, 1))
	k.mustDo(t, gen, map[string]any{"in": map[string]any{"prompt": "a fox", "connectionId": img, "model": "gpt-image-1"}}, nil)
	k.mustDo(t, `{ usageTotals { totalTokens cost } }`, nil, &t1)
	if t1.UsageTotals.TotalTokens-t0.UsageTotals.TotalTokens != 212 || t1.UsageTotals.Cost == nil {
		t.Fatalf("usage totals %+v → %+v, want 212 more tokens, priced", t0, t1)
	}

	// image_generation is not read-only: EXPLORE refuses it, ASK asks.
	k.mustDo(t, `mutation($c: ID) { setDefaultModel(purpose: IMAGE, connectionId: $c, model: "gpt-image-1") { image { model } } }`, map[string]any{"c": img}, nil)
	call := openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "call_img", "image_generation", `{"prompt":"a red dot"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}
	sid := k.chatSession(t, nil, "EXPLORE")
	w := k.watch(t, sid)
	k.fake.Enqueue(call, openaitest.TextStream(testModel, "ok"))
	k.send(t, sid, "draw")
	w.turnEnd()
	msgs := k.messages(t, sid)
	if m := msgs[len(msgs)-2]; m.Role != "TOOL" || !strings.Contains(m.Text, "EXPLORE runs only read-only tools") {
		t.Fatalf("EXPLORE tool message %+v", m)
	}
	// PLAN refuses it even under BYPASS, like any write.
	sid = k.chatSession(t, nil, "BYPASS")
	k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {agentMode: PLAN}) { id } }`, map[string]any{"s": sid}, nil)
	w = k.watch(t, sid)
	k.fake.Enqueue(call, openaitest.TextStream(testModel, "ok"))
	k.send(t, sid, "draw")
	w.turnEnd()
	msgs = k.messages(t, sid)
	if m := msgs[len(msgs)-2]; m.Role != "TOOL" || !strings.Contains(m.Text, "the session is planning") || !strings.Contains(m.Text, "image_generation") {
		t.Fatalf("PLAN tool message %+v", m)
	}
	sid = k.chatSession(t, nil, "ASK")
	w = k.watch(t, sid)
	k.fake.Enqueue(call, openaitest.TextStream(testModel, "ok"))
	k.send(t, sid, "draw")
	var req core.ApprovalPayload
	if err := w.next(core.EventApprovalRequested).Decode(&req); err != nil || req.Tool != "image_generation" {
		t.Fatalf("approval %+v %v", req, err)
	}
	k.mustDo(t, `mutation($s: ID!, $r: ID!) { resolveApproval(sessionId: $s, requestId: $r, decision: DENIED) }`, map[string]any{"s": sid, "r": req.RequestID}, nil)
	w.turnEnd()
}
