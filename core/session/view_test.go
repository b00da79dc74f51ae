package session_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/view")

// viewCase is one input file of testdata/view. Seq is not part of the
// message payload, so the file carries it beside each message.
type viewCase struct {
	ToolResultLimit int  `json:"toolResultLimit"`
	DropImages      bool `json:"dropImages"`
	// Images holds the stored bytes by attachment id; a missing id fails
	// to load with an error that names an artifact path.
	Images   map[string][]byte `json:"images"`
	Messages []struct {
		Seq int64 `json:"seq"`
		core.Message
	} `json:"messages"`
}

func loadViewCase(t *testing.T, path string) (viewCase, []core.Message) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c viewCase
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	msgs := make([]core.Message, len(c.Messages))
	for i, m := range c.Messages {
		msgs[i] = m.Message
		msgs[i].Seq = m.Seq
		msgs[i].Active = true
	}
	return c, msgs
}

func (c viewCase) options() session.ViewOptions {
	return session.ViewOptions{
		ToolResultLimit: c.ToolResultLimit,
		DropImages:      c.DropImages,
		LoadImage: func(a core.Attachment) ([]byte, error) {
			data, ok := c.Images[a.ID]
			if !ok {
				return nil, fmt.Errorf("open /data/artifacts/sha256/%s: no such file or directory", a.SHA256)
			}
			return data, nil
		},
	}
}

func TestProviderViewGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "view", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, in := range inputs {
		if strings.HasSuffix(in, ".golden.json") {
			continue
		}
		n++
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			c, msgs := loadViewCase(t, in)
			_, pristine := loadViewCase(t, in)

			got, err := session.ProviderView(msgs, c.options())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(msgs, pristine) {
				t.Fatal("ProviderView modified its input")
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false) // keep the browser element blocks readable
			enc.SetIndent("", "  ")
			if err := enc.Encode(got); err != nil {
				t.Fatal(err)
			}
			out := buf.Bytes()

			golden := strings.TrimSuffix(in, ".json") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./core -run TestProviderViewGolden -update)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("view differs from %s; got:\n%s", golden, out)
			}

			checkNothingLeaked(t, msgs, string(out))
			checkToolSequence(t, got)

			// The view shares no mutable memory with the canonical messages.
			scribble(got)
			if !reflect.DeepEqual(msgs, pristine) {
				t.Fatal("changing the view changed the canonical messages")
			}
		})
	}
	if n == 0 {
		t.Fatal("no view test cases found")
	}
}

// checkNothingLeaked asserts what MSG-8 and PRV-9 forbid in the view of every
// case, beyond what the golden file pins.
func checkNothingLeaked(t *testing.T, msgs []core.Message, view string) {
	t.Helper()
	forbid := func(what, s string) {
		t.Helper()
		if s != "" && strings.Contains(view, s) {
			t.Errorf("view leaks %s %q", what, s)
		}
	}
	for _, key := range []string{`"diff"`, `"fileChanges"`, `"seq"`, `"startedAt"`, `"finishedAt"`, `"turnStatus"`, `"sha256"`, "/data/artifacts"} {
		forbid("field or path", key)
	}
	for _, m := range msgs {
		forbid("diff", m.Diff)
		for _, fc := range m.FileChanges {
			forbid("file change hash", fc.BeforeHash)
			forbid("file change hash", fc.AfterHash)
		}
		for _, a := range m.Attachments {
			forbid("attachment hash", a.SHA256)
		}
		if m.Role == core.RoleAssistant && !m.Interrupted {
			forbid("reasoning of a completed message", m.Reasoning)
		}
	}
}

// checkToolSequence asserts the sequence a provider accepts: every assistant
// tool call is answered exactly once by the tool messages that directly
// follow it, and no tool message appears anywhere else.
func checkToolSequence(t *testing.T, view []core.ProviderMessage) {
	t.Helper()
	for i := 0; i < len(view); i++ {
		m := view[i]
		switch m.Role {
		case core.RoleTool:
			t.Errorf("view[%d]: tool message %s does not follow its assistant message", i, m.ToolCallID)
		case core.RoleAssistant:
			pending := map[string]bool{}
			for _, tc := range m.ToolCalls {
				pending[tc.ID] = true
			}
			for i+1 < len(view) && view[i+1].Role == core.RoleTool {
				i++
				if !pending[view[i].ToolCallID] {
					t.Errorf("view[%d]: tool message %s answers no pending call", i, view[i].ToolCallID)
				}
				delete(pending, view[i].ToolCallID)
			}
			for id := range pending {
				t.Errorf("tool call %s has no result in the view", id)
			}
		}
	}
}

func scribble(view []core.ProviderMessage) {
	for i := range view {
		for j := range view[i].Content {
			for k := range view[i].Content[j].Data {
				view[i].Content[j].Data[k] = 'X'
			}
		}
		for j := range view[i].ToolCalls {
			for k := range view[i].ToolCalls[j].Input {
				view[i].ToolCalls[j].Input[k] = 'X'
			}
		}
	}
}

func TestProviderViewImages(t *testing.T) {
	img := core.Attachment{ID: "att_1", Name: "shot.png", Kind: "image", MediaType: "image/png", Size: 4, SHA256: strings.Repeat("a", 64)}
	msgs := []core.Message{{Seq: 1, Role: core.RoleUser, Text: "look", Attachments: []core.Attachment{img}}}
	load := func(core.Attachment) ([]byte, error) { return []byte("PNG!"), nil }

	tests := []struct {
		name string
		opts session.ViewOptions
		want core.ContentPart
	}{
		{"loaded", session.ViewOptions{LoadImage: load}, core.ContentPart{Type: "image", MediaType: "image/png", Data: []byte("PNG!")}},
		{"nil loader", session.ViewOptions{}, core.ContentPart{Type: "text", Text: `[image "shot.png" unavailable: images cannot be loaded here]`}},
		{"dropped for the model", session.ViewOptions{LoadImage: load, DropImages: true}, core.ContentPart{Type: "text", Text: `[image "shot.png" unavailable: the model does not accept images]`}},
		{"domain error", session.ViewOptions{LoadImage: func(core.Attachment) ([]byte, error) {
			return nil, core.Errorf(core.CodeNotFound, "artifact not found")
		}}, core.ContentPart{Type: "text", Text: `[image "shot.png" unavailable: artifact not found]`}},
		{"other error", session.ViewOptions{LoadImage: func(core.Attachment) ([]byte, error) {
			return nil, errors.New("open /secret/path: permission denied")
		}}, core.ContentPart{Type: "text", Text: `[image "shot.png" unavailable: it could not be read from the artifact store]`}},
		{"empty bytes", session.ViewOptions{LoadImage: func(core.Attachment) ([]byte, error) { return nil, nil }},
			core.ContentPart{Type: "text", Text: `[image "shot.png" unavailable: the stored image is empty]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := session.ProviderView(msgs, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || len(got[0].Content) != 2 {
				t.Fatalf("view = %+v, want one user message with two parts", got)
			}
			if !reflect.DeepEqual(got[0].Content[1], tt.want) {
				t.Errorf("image part = %+v, want %+v", got[0].Content[1], tt.want)
			}
		})
	}
}

func TestProviderViewTruncation(t *testing.T) {
	call := core.Message{Seq: 1, Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "c1", Name: "read"}}}
	tests := []struct {
		name  string
		text  string
		seq   int64
		limit int
		want  string
	}{
		{"no limit", strings.Repeat("x", 100), 2, 0, strings.Repeat("x", 100)},
		{"at the limit", "abcdef", 2, 6, "abcdef"},
		{"characters not bytes", "ééééé", 2, 5, "ééééé"},
		{"over the limit", "héllo wörld", 9, 4,
			"hé\n\n[tool result truncated: characters 2 to 9 of 11 are not shown. The full result is kept as event seq 9; " +
				`to read the omitted part call read_tool_result with {"seq": 9, "offset": 2, "length": 7} (offset and length count characters)]` +
				"\n\nld"},
		{"no seq to reference", "abcdefgh", 0, 2,
			"a\n\n[tool result truncated: characters 1 to 7 of 8 are not shown]\n\nh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := []core.Message{call, {Seq: tt.seq, Role: core.RoleTool, ToolCallID: "c1", Text: tt.text}}
			got, err := session.ProviderView(msgs, session.ViewOptions{ToolResultLimit: tt.limit})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("view has %d messages, want 2", len(got))
			}
			if text := got[1].Content[0].Text; text != tt.want {
				t.Errorf("result = %q, want %q", text, tt.want)
			}
			if msgs[1].Text != tt.text {
				t.Error("the canonical tool message changed")
			}
		})
	}
}

func TestProviderViewToolCallInput(t *testing.T) {
	msgs := []core.Message{
		{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "c1", Name: "ls"}, {ID: "c2", Name: "pwd"}}},
		{Role: core.RoleTool, ToolCallID: "c2"},
	}
	got, err := session.ProviderView(msgs, session.ViewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("view has %d messages, want 3", len(got))
	}
	if in := string(got[0].ToolCalls[0].Input); in != "{}" {
		t.Errorf("missing input rendered as %s, want {}", in)
	}
	if got[1].ToolCallID != "c2" || got[1].Content[0].Text != session.EmptyToolResult {
		t.Errorf("empty result = %+v, want %q for c2", got[1], session.EmptyToolResult)
	}
	if got[2].ToolCallID != "c1" || got[2].Content[0].Text != session.UnansweredToolResult {
		t.Errorf("unanswered call result = %+v, want %q for c1", got[2], session.UnansweredToolResult)
	}
}

func TestProviderViewUnknownRole(t *testing.T) {
	_, err := session.ProviderView([]core.Message{{Seq: 3, Role: "narrator", Text: "x"}}, session.ViewOptions{})
	if err == nil || !strings.Contains(err.Error(), "seq 3") {
		t.Fatalf("err = %v, want an error naming seq 3", err)
	}
}
