package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// pngOf is a w×h PNG.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// addImageDefault adds the IMAGE connection "painter" (model gpt-image-1)
// to the openaitest server at baseURL and makes it the image default, so
// that models get the image_generation tool.
func (o *outputs) addImageDefault(t *testing.T, addr, baseURL string) {
	t.Helper()
	o.mustRun(t, "", "connections", "add", "--addr", addr, "--name", "painter", "--type", "image", "--base-url", baseURL, "--model", "gpt-image-1")
	o.mustRun(t, "", "connections", "default", "painter/gpt-image-1", "--purpose", "image", "--addr", addr)
}

// What a tool generates reaches a command-line user: foya exec names each
// attachment a tool returned, and foya attachments save writes its bytes
// (whole or not at all, never over a file unless --force, - to stdout). A
// video connection is added from the command line with its protocol.
func TestExecGeneratedAttachmentsSaved(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	o.addImageDefault(t, k.addr, fake.BaseURL())
	r := o.mustRun(t, "", "connections", "add", "--addr", k.addr, "--name", "director", "--type", "video", "--base-url", fake.BaseURL(), "--model", "sora-2", "--json")
	var vc struct{ VideoProtocol string }
	if err := json.Unmarshal([]byte(r.stdout), &vc); err != nil || vc.VideoProtocol != "openai_video" {
		t.Fatalf("video connection: %s %v", r.stdout, err)
	}
	if r := o.run(t, "", "connections", "add", "--addr", k.addr, "--name", "x", "--base-url", fake.BaseURL(), "--video-protocol", "openai_video"); r.code != 2 || !strings.Contains(r.stderr, "--type video") {
		t.Fatalf("--video-protocol on a language connection: exit %d %s", r.code, r.stderr)
	}

	pic := bytes.NewBuffer(pngOf(t, 4, 3))
	fake.Enqueue(openaitest.Response{Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_img", "type": "function",
			"function": map[string]any{"name": "image_generation", "arguments": `{"prompt":"a grey rectangle"}`}}}}, ""),
		openaitest.Chunk("gpt-t", map[string]any{}, "tool_calls"),
	}}, openaitest.Response{Body: `{"created":1,"data":[{"b64_json":"` + base64.StdEncoding.EncodeToString(pic.Bytes()) + `"}]}`},
		openaitest.TextStream("gpt-t", "Drawn."))
	dir := t.TempDir()
	r = o.runIn(t, dir, nil, "exec", "--addr", k.addr, "--approval-mode", "bypass", "draw a grey rectangle")
	m := regexp.MustCompile(`attachment (att_\w+): generated-1\.png \(image/png, (\d+) bytes\); foya attachments save (att_\w+)`).FindStringSubmatch(r.stderr)
	if r.code != 0 || m == nil || m[1] != m[3] {
		t.Fatalf("exec: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	id := m[1]
	// foya sessions show lists it too.
	sid := regexp.MustCompile(`session (ses_\S+)`).FindStringSubmatch(r.stderr)
	if sid == nil {
		t.Fatalf("no session id: %s", r.stderr)
	}
	if show := o.mustRun(t, "", "sessions", "show", sid[1], "--addr", k.addr); !strings.Contains(show.stdout, "attachment "+id+": generated-1.png (image/png, ") {
		t.Fatalf("sessions show:\n%s", show.stdout)
	}

	// Saved under its own name in the current directory, byte for byte.
	r = o.runIn(t, dir, nil, "attachments", "save", id, "--addr", k.addr, "--json")
	var saved struct {
		Path  string
		Bytes int
	}
	if err := json.Unmarshal([]byte(r.stdout), &saved); err != nil || r.code != 0 || saved.Path != filepath.Join(dir, "generated-1.png") || saved.Bytes != pic.Len() {
		t.Fatalf("save: exit %d %s %s (%v)", r.code, r.stdout, r.stderr, err)
	}
	if got, _ := os.ReadFile(saved.Path); !bytes.Equal(got, pic.Bytes()) {
		t.Fatalf("saved %d bytes, want the generated %d", len(got), pic.Len())
	}
	// Not over an existing file, unless --force; nothing left behind.
	if err := os.WriteFile(saved.Path, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = o.runIn(t, dir, nil, "attachments", "save", id, "--addr", k.addr)
	if got, _ := os.ReadFile(saved.Path); r.code != 1 || !strings.Contains(r.stderr, "exists") || string(got) != "mine" {
		t.Fatalf("save over a file: exit %d %s, file %q", r.code, r.stderr, got)
	}
	o.mustRun(t, "", "attachments", "save", id, saved.Path, "--force", "--addr", k.addr)
	if got, _ := os.ReadFile(saved.Path); !bytes.Equal(got, pic.Bytes()) {
		t.Fatal("--force did not replace the file")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left in the directory: %v", ents)
	}
	// A directory as FILE takes the attachment's own name.
	into := t.TempDir()
	o.mustRun(t, "", "attachments", "save", id, into, "--addr", k.addr)
	if got, _ := os.ReadFile(filepath.Join(into, "generated-1.png")); !bytes.Equal(got, pic.Bytes()) {
		t.Fatal("saving into a directory")
	}
	// To stdout; an unknown id is the kernel's NOT_FOUND.
	if r := o.mustRun(t, "", "attachments", "save", id, "-", "--addr", k.addr); r.stdout != pic.String() {
		t.Fatalf("save to stdout: %d bytes", len(r.stdout))
	}
	if r := o.run(t, "", "attachments", "save", "att_nope", "-", "--addr", k.addr); r.code != 1 || !strings.Contains(r.stderr, "NOT_FOUND") {
		t.Fatalf("unknown id: exit %d %s", r.code, r.stderr)
	}
	o.checkNoKey(t)
}
