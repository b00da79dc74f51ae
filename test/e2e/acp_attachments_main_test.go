package e2e

import (
	"encoding/base64"
	"testing"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// imageBlocks returns the data of the image content blocks in the updates
// of kind (user_message_chunk) or in the tool_call_update of call.
func imageBlocks(us []map[string]any, kind, call string) []string {
	var out []string
	add := func(c any) {
		if b, ok := c.(map[string]any); ok && b["type"] == "image" {
			d, _ := b["data"].(string)
			out = append(out, d)
		}
	}
	for _, u := range us {
		switch {
		case kind != "" && u["sessionUpdate"] == kind:
			add(u["content"])
		case call != "" && u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == call:
			items, _ := u["content"].([]any)
			for _, it := range items {
				if w, ok := it.(map[string]any); ok && w["type"] == "content" {
					add(w["content"])
				}
			}
		}
	}
	return out
}

// foya acp shows images to the editor: an image a tool generates goes out
// inline in its tool_call_update (read from the kernel's attachment route),
// and a session's load replays the user's own image and the generated one.
func TestACPToolImagesAndReplay(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	o.addImageDefault(t, k.addr, fake.BaseURL())
	mine, generated := base64.StdEncoding.EncodeToString(pngOf(t, 3, 2)), base64.StdEncoding.EncodeToString(pngOf(t, 5, 4))

	p := startACP(t, "--addr", k.addr)
	p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil)
	var ns struct{ SessionID string }
	p.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}}, &ns)
	p.call("session/set_mode", map[string]any{"sessionId": ns.SessionID, "modeId": "bypass"}, nil)
	fake.Enqueue(toolCallResponse("call_img", "image_generation", `{"prompt":"a bigger black box"}`),
		openaitest.Response{Body: `{"created":1,"data":[{"b64_json":"` + generated + `"}]}`},
		openaitest.TextStream("gpt-t", "Here."), openaitest.Completion("gpt-t", "Boxes", "stop", 5, 2))
	mk := p.mark()
	var pr struct{ StopReason string }
	p.call("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{
		map[string]any{"type": "text", "text": "draw it bigger"},
		map[string]any{"type": "image", "mimeType": "image/png", "data": mine},
	}}, &pr)
	if got := imageBlocks(p.since(mk), "", "call_img"); pr.StopReason != "end_turn" || len(got) != 1 || got[0] != generated {
		t.Fatalf("the tool's image: %d blocks (stop %s)", len(got), pr.StopReason)
	}
	waitTitles(t, fake, 1)

	q := startACP(t, "--addr", k.addr)
	q.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil)
	q.call("session/load", map[string]any{"sessionId": ns.SessionID, "cwd": t.TempDir(), "mcpServers": []any{}}, nil)
	us := q.since(0)
	if got := imageBlocks(us, "user_message_chunk", ""); len(got) != 1 || got[0] != mine {
		t.Fatalf("replayed user images: %d", len(got))
	}
	if got := imageBlocks(us, "", "call_img"); len(got) != 1 || got[0] != generated {
		t.Fatalf("replayed tool images: %d", len(got))
	}
}
