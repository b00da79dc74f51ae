package graph_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

func pngBytes(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// upload sends a PNG with the GraphQL multipart request spec, checks how
// it was described and returns the attachment id.
func (k *testKernel) upload(t *testing.T, name string, data []byte) string {
	t.Helper()
	a := k.uploadAttachment(t, name, data)
	if a.Kind != "image" || a.MediaType != "image/png" || a.Width != 3 || a.Height != 2 || a.Size != len(data) || len(a.Sha256) != 64 {
		t.Fatalf("attachment %+v", a)
	}
	return a.ID
}

func TestImageAttachmentReachesTheModel(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, map[string]any{"imageInput": true}, "BYPASS")
	w := k.watch(t, sid)
	att := k.upload(t, "dot.png", pngBytes(t))
	k.fake.Enqueue(openaitest_TextStream("A red dot."))
	k.mustDo(t, `mutation($s: ID!, $a: [ID!]) { sendMessage(sessionId: $s, input: {text: "what is this?", attachmentIds: $a}) { turnStarted } }`, map[string]any{"s": sid, "a": []string{att}}, nil)
	w.turnEnd()
	body := string(k.fake.Requests()[0].Body)
	if !bytes.Contains([]byte(body), []byte("data:image/png;base64,")) {
		t.Fatalf("image not sent as a data URL: %.300s", body)
	}
	var s struct {
		Session struct {
			Messages []struct {
				Attachments []struct{ ID, Sha256 string }
			}
		}
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { messages { attachments { id sha256 } } } }`, map[string]any{"s": sid}, &s)
	if a := s.Session.Messages[0].Attachments; len(a) != 1 || a[0].ID != att {
		t.Fatalf("user message attachments %+v", a)
	}
}
