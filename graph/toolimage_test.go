package graph_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// readImageTurn lets the model read logo.png with the built-in read tool and
// returns the decoded messages of the follow-up request.
func readImageTurn(t *testing.T, caps map[string]any) ([]map[string]any, []byte) {
	k := newTestKernel(t)
	dir := t.TempDir()
	pic := pngBytes(t)
	if err := os.WriteFile(filepath.Join(dir, "logo.png"), pic, 0o644); err != nil {
		t.Fatal(err)
	}
	var p struct{ CreateProject struct{ ID string } }
	k.mustDo(t, `mutation($p: String!) { createProject(input: {path: $p}) { id } }`, map[string]any{"p": dir}, &p)
	sid := k.chatSession(t, caps, "BYPASS")
	k.mustDo(t, `mutation($s: ID!, $p: ID) { updateSession(id: $s, input: {projectId: $p}) { id } }`, map[string]any{"s": sid, "p": p.CreateProject.ID}, nil)
	w := k.watch(t, sid)
	k.fake.Enqueue(
		openaitest.Response{Events: []string{chunk(toolCallDelta(0, "call_r", "read", `{"path":"logo.png"}`), ""), chunk(map[string]any{}, "tool_calls")}},
		openaitest.TextStream(testModel, "A red dot."),
	)
	k.send(t, sid, "what does logo.png show?")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	// The tool message keeps the image as an attachment, visible through the API.
	var s struct {
		Session struct {
			Messages []struct {
				Role        string
				Attachments []struct{ Kind, MediaType string }
			}
		}
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { messages { role attachments { kind mediaType } } } }`, map[string]any{"s": sid}, &s)
	if m := s.Session.Messages[2]; m.Role != "TOOL" || len(m.Attachments) != 1 || m.Attachments[0].MediaType != "image/png" {
		t.Fatalf("tool message %+v", m)
	}
	return k.requestMessages(t, 1), pic
}

func TestToolImageReachesVisionModel(t *testing.T) {
	msgs, pic := readImageTurn(t, nil)
	// system, user, assistant (tool call), tool (text), user (the image as the tool's output).
	if len(msgs) != 5 || msgs[3]["role"] != "tool" || msgs[4]["role"] != "user" {
		t.Fatalf("request messages %+v", msgs)
	}
	if c, ok := msgs[3]["content"].(string); !ok || !strings.Contains(c, "logo.png") || msgs[3]["tool_call_id"] != "call_r" {
		t.Fatalf("tool message %+v", msgs[3])
	}
	parts, _ := msgs[4]["content"].([]any)
	if len(parts) != 2 {
		t.Fatalf("image message %+v", msgs[4])
	}
	label, _ := parts[0].(map[string]any)
	img, _ := parts[1].(map[string]any)
	url, _ := img["image_url"].(map[string]any)
	if label["type"] != "text" || !strings.Contains(label["text"].(string), "output of tool call call_r") ||
		img["type"] != "image_url" || url["url"] != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(pic) {
		t.Fatalf("image parts %+v", parts)
	}
}

func TestToolImageNoteForTextModel(t *testing.T) {
	msgs, _ := readImageTurn(t, map[string]any{"imageInput": false})
	if len(msgs) != 4 || msgs[3]["role"] != "tool" {
		t.Fatalf("request messages %+v", msgs)
	}
	if c, _ := msgs[3]["content"].(string); !strings.Contains(c, `[image "logo.png" unavailable: the model does not accept images]`) {
		t.Fatalf("tool message %q", c)
	}
}
