package graph_test

import (
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

func (k *testKernel) videoConn(t *testing.T) string {
	c := k.createConn(t, map[string]any{"name": "director", "type": "VIDEO", "videoProtocol": "openai_video", "baseUrl": k.fake.BaseURL(), "apiKey": "sk-vid", "models": []any{map[string]any{"id": "sora-2"}}})
	return c.ID
}

// The video_generation tool (PRV-2): offered only with a VIDEO default;
// the built-in provider runs the openai_video job; the video is the tool
// message's attachment, and the model is told so in text, never sent the
// bytes. Not read-only: EXPLORE refuses it.
func TestVideoGenerationTool(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.TextStream(testModel, "no tool"))
	k.send(t, sid, "hi")
	w.turnEnd()
	if strings.Contains(string(k.fake.LastRequest().Body), `"video_generation"`) {
		t.Fatal("video_generation offered without a video default")
	}
	vc := k.videoConn(t)
	k.mustDo(t, `mutation($c: ID) { setDefaultModel(purpose: VIDEO, connectionId: $c, model: "sora-2") { video { model } } }`, map[string]any{"c": vc}, nil)
	mp4 := openaitest.MP4("a red dot moving", 4096)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "call_vid", "video_generation", `{"prompt":"a red dot moving right","seconds":4,"size":"1280x720"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.VideoJob("video_t", "queued", 0), openaitest.VideoJob("video_t", "completed", 100), openaitest.VideoContent(mp4),
		openaitest.TextStream(testModel, "Here it is."))
	k.send(t, sid, "make a clip of a red dot")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	reqs := k.fake.Requests()
	n := len(reqs)
	if !strings.Contains(string(reqs[n-5].Body), `"name":"video_generation"`) || reqs[n-4].Path != "/v1/videos" || reqs[n-2].Path != "/v1/videos/video_t/content" {
		t.Fatalf("requests: %s %s %s", reqs[n-5].Path, reqs[n-4].Path, reqs[n-2].Path)
	}
	if form, err := reqs[n-4].Form(); err != nil || form["seconds"] != "4" || form["size"] != "1280x720" || form["model"] != "sora-2" {
		t.Fatalf("job form %v %v", form, err)
	}
	type message struct {
		Role, Text  string
		ToolName    *string
		Attachments []struct {
			Kind, MediaType string
			Size            int
		}
	}
	var s struct {
		Session struct{ Messages []message }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { messages { role text toolName attachments { kind mediaType size } } } }`, map[string]any{"s": sid}, &s)
	var tool *message
	for i := range s.Session.Messages {
		if deref(s.Session.Messages[i].ToolName) == "video_generation" {
			tool = &s.Session.Messages[i]
		}
	}
	if tool == nil || len(tool.Attachments) != 1 || tool.Attachments[0].MediaType != "video/mp4" || tool.Attachments[0].Size != len(mp4) || !strings.Contains(tool.Text, "generated 1 video") {
		t.Fatalf("tool message %+v", tool)
	}
	// The follow-up request names the attached video, without its bytes.
	body := string(k.fake.LastRequest().Body)
	if !strings.Contains(body, "generated 1 video") || strings.Contains(body, "a red dot moving....") || strings.Contains(body, "base64") {
		t.Fatalf("follow-up request %.400s", body)
	}

	// EXPLORE refuses it like a write, before any job is created.
	ex := k.chatSession(t, nil, "EXPLORE")
	we := k.watch(t, ex)
	before := len(k.fake.Requests())
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "call_v2", "video_generation", `{"prompt":"x"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "ok"))
	k.send(t, ex, "film")
	we.turnEnd()
	msgs := k.messages(t, ex)
	if m := msgs[len(msgs)-2]; m.Role != "TOOL" || !strings.Contains(m.Text, "EXPLORE runs only read-only tools") {
		t.Fatalf("EXPLORE tool message %+v", m)
	}
	for _, r := range k.fake.Requests()[before:] {
		if strings.HasPrefix(r.Path, "/v1/videos") {
			t.Fatalf("a video job was created under EXPLORE: %s", r.Path)
		}
	}
}
