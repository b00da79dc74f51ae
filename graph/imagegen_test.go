package graph_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

func imagesResponse(t *testing.T, n int) openaitest.Response {
	var data []string
	for range n {
		data = append(data, fmt.Sprintf(`{"b64_json":%q}`, base64.StdEncoding.EncodeToString(pngBytes(t))))
	}
	return openaitest.Response{Body: `{"created":1700000000,"data":[` + strings.Join(data, ",") + `],"usage":{"input_tokens":12,"output_tokens":200,"total_tokens":212}}`}
}

func (k *testKernel) imageConn(t *testing.T) string {
	c := k.createConn(t, map[string]any{"name": "painter", "type": "IMAGE", "baseUrl": k.fake.BaseURL(), "apiKey": "sk-img", "models": []any{map[string]any{"id": "gpt-image-1"}}})
	return c.ID
}

func TestGenerateImage(t *testing.T) {
	k := newTestKernel(t)
	const gen = `mutation($in: GenerateImageInput!) { generateImage(input: $in) { id name kind mediaType size sha256 } }`
	k.mustFail(t, "UNAVAILABLE", gen, map[string]any{"in": map[string]any{"prompt": "a fox"}})
	sid := k.chatSession(t, nil, "BYPASS")
	lang := k.firstConnection(t)
	k.mustFail(t, "BAD_INPUT", gen, map[string]any{"in": map[string]any{"prompt": "a fox", "connectionId": lang}})
	img := k.imageConn(t)
	k.mustDo(t, `mutation($c: ID) { setDefaultModel(purpose: IMAGE, connectionId: $c, model: "gpt-image-1") { image { model } } }`, map[string]any{"c": img}, nil)
	k.mustFail(t, "BAD_INPUT", gen, map[string]any{"in": map[string]any{"prompt": "a fox", "size": "huge"}})

	k.fake.Enqueue(imagesResponse(t, 2))
	var out struct {
		GenerateImage []struct{ ID, Name, Kind, MediaType, Sha256 string }
	}
	k.mustDo(t, gen, map[string]any{"in": map[string]any{"prompt": "a fox in the snow", "count": 2, "size": "1024x1024", "sessionId": sid}}, &out)
	if len(out.GenerateImage) != 2 || out.GenerateImage[0].Kind != "image" || out.GenerateImage[0].MediaType != "image/png" || !strings.HasSuffix(out.GenerateImage[0].Name, ".png") {
		t.Fatalf("attachments %+v", out.GenerateImage)
	}
	req := k.fake.LastRequest()
	var body map[string]any
	json.Unmarshal(req.Body, &body)
	if req.Path != "/v1/images/generations" || body["model"] != "gpt-image-1" || body["prompt"] != "a fox in the snow" || body["n"] != float64(2) || body["size"] != "1024x1024" || req.Header.Get("Authorization") != "Bearer sk-img" {
		t.Fatalf("request %s %s", req.Path, req.Body)
	}
	// Stored like an upload: usable in sendMessage; the usage went to the session.
	k.fake.Enqueue(openaitest.TextStream(testModel, "nice fox"))
	w := k.watch(t, sid)
	k.mustDo(t, `mutation($s: ID!, $a: [ID!]) { sendMessage(sessionId: $s, input: {text: "describe", attachmentIds: $a}) { turnStarted } }`, map[string]any{"s": sid, "a": []string{out.GenerateImage[0].ID}}, nil)
	w.turnEnd()
	if !strings.Contains(string(k.fake.LastRequest().Body), "data:image/png;base64,") {
		t.Fatal("the generated image did not reach the chat model")
	}
	var u struct {
		Session struct{ Usage struct{ OutputTokens int } }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { usage { outputTokens } } }`, map[string]any{"s": sid}, &u)
	if u.Session.Usage.OutputTokens < 200 {
		t.Fatalf("usage %+v", u)
	}
	// A service failure is a PROVIDER_ERROR that never shows the key.
	k.fake.Enqueue(openaitest.Error(400, "invalid_request_error", "content_policy_violation", "Your request was rejected (key sk-img)"))
	if msg := k.mustFail(t, "PROVIDER_ERROR", gen, map[string]any{"in": map[string]any{"prompt": "bad"}}); strings.Contains(msg, "sk-img") {
		t.Fatalf("key in message %q", msg)
	}
}

func TestImageGenerationTool(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	// Without an image default the tool is not offered.
	k.fake.Enqueue(openaitest.TextStream(testModel, "no tool"))
	k.send(t, sid, "hi")
	w.turnEnd()
	if strings.Contains(string(k.fake.LastRequest().Body), `"image_generation"`) {
		t.Fatal("image_generation offered without an image default")
	}
	img := k.imageConn(t)
	k.mustDo(t, `mutation($c: ID) { setDefaultModel(purpose: IMAGE, connectionId: $c, model: "gpt-image-1") { image { model } } }`, map[string]any{"c": img}, nil)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "call_img", "image_generation", `{"prompt":"a red dot"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, imagesResponse(t, 1), openaitest.TextStream(testModel, "Here it is."))
	k.send(t, sid, "draw a red dot")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	reqs := k.fake.Requests()
	if !strings.Contains(string(reqs[1].Body), `"name":"image_generation"`) || reqs[2].Path != "/v1/images/generations" {
		t.Fatalf("requests: %s / %s", reqs[1].Path, reqs[2].Path)
	}
	// The tool message carries the image; the vision model sees it as the tool's output.
	var s struct {
		Session struct {
			Messages []struct {
				Role        string
				ToolName    *string
				Attachments []struct{ Kind string }
			}
		}
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { messages { role toolName attachments { kind } } } }`, map[string]any{"s": sid}, &s)
	tool := s.Session.Messages[4]
	if deref(tool.ToolName) != "image_generation" || len(tool.Attachments) != 1 || tool.Attachments[0].Kind != "image" {
		t.Fatalf("tool message %+v", tool)
	}
	rm := k.requestMessages(t, 3)
	last := rm[len(rm)-1]
	if last["role"] != "user" || !strings.Contains(fmt.Sprint(last["content"]), "output of tool call call_img") || !strings.Contains(fmt.Sprint(last["content"]), "data:image/png;base64,") {
		t.Fatalf("follow-up %v", last)
	}
}

// Generated images of several MiB come back through the plugin protocol:
// the kernel's bound on a generation's answer is the attachment limit per
// requested image (plugins/host TestPluginAnswersBounded has the refusals).
func TestGenerateLargeImages(t *testing.T) {
	k := newTestKernel(t)
	img := k.imageConn(t)
	// Two uncompressed 1024×1024 RGBA PNGs: 4 MiB of pixels each.
	pic := image.NewRGBA(image.Rect(0, 0, 1024, 1024))
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&b, pic); err != nil {
		t.Fatal(err)
	}
	one := fmt.Sprintf(`{"b64_json":%q}`, base64.StdEncoding.EncodeToString(b.Bytes()))
	k.fake.Enqueue(openaitest.Response{Body: `{"created":1700000000,"data":[` + one + "," + one + `]}`})
	var out struct {
		GenerateImage []struct {
			Kind        string
			Size, Width int
			Height      int
		}
	}
	k.mustDo(t, `mutation($in: GenerateImageInput!) { generateImage(input: $in) { kind size width height } }`,
		map[string]any{"in": map[string]any{"prompt": "a big black square", "count": 2, "connectionId": img}}, &out)
	if len(out.GenerateImage) != 2 || out.GenerateImage[1].Size != b.Len() || out.GenerateImage[1].Width != 1024 || out.GenerateImage[0].Kind != "image" {
		t.Fatalf("attachments %+v (each %d bytes)", out.GenerateImage, b.Len())
	}
}
