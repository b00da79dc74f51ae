package graph_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
	"github.com/foya-dev/foya/core/engine"
)

// fileChangeArchive is a foya.session document whose fourth line is a tool
// message creating path with content (its bytes in the document, so that a
// rewind of the imported session could write them).
func fileChangeArchive(t testing.TB, path, content string) (string, string) {
	t.Helper()
	now := time.Now().UTC()
	mk := func(typ core.EventType, p any) core.Event {
		ev, err := core.NewEvent("ses_src", typ, p)
		if err != nil {
			t.Fatal(err)
		}
		ev.At = now
		return ev
	}
	hash := sha(content)
	events := []core.Event{
		mk(core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: "ses_src", ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: now}}),
		mk(core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleUser, Text: "set up"}}),
		mk(core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleTool, Text: "written", ToolCallID: "c1", ToolName: "write",
			FileChanges: []core.FileChange{{Path: "ok.txt", Action: core.FileCreate, AfterHash: sha("fine")}, {Path: path, Action: core.FileCreate, AfterHash: hash}}}}),
	}
	for i := range events {
		events[i].Seq = int64(i) + 1
	}
	var doc bytes.Buffer
	blobs := map[string][]byte{hash: []byte(content), sha("fine"): []byte("fine")}
	order := []string{sha("fine"), hash}
	if content == "fine" {
		order = order[:1]
	}
	if err := archive.WriteSessionArchive(&doc, archive.ArchiveHeader{SessionID: "ses_src", ExportedAt: now}, events, order, blobs); err != nil {
		t.Fatal(err)
	}
	return doc.String(), hash
}

// An imported file change obeys the write tool's rules: a path that is
// absolute, escapes the project, lies in .git or in the kernel's data
// directory (the project is a "$HOME" that contains it) or leads out
// through a symlink is refused with BAD_INPUT naming the line, and nothing
// is stored: no session, no blob, no file.
func TestImportRefusesFileChangesOutsideTheProject(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "foya")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(home, "link")); err != nil {
		t.Fatal(err)
	}
	k := newTestKernel(t, func(c *engine.Config) { c.DataDir = data })
	var p struct{ CreateProject struct{ ID string } }
	k.mustDo(t, `mutation($p: String!) { createProject(input: {path: $p}) { id } }`, map[string]any{"p": home}, &p)
	prj := p.CreateProject.ID

	for _, tc := range []struct{ path, want string }{
		{".local/share/foya/mcp.json", `line 4: fileChanges[1].path ".local/share/foya/mcp.json" lies in the kernel's data directory`},
		{".local/share/foya", "lies in the kernel's data directory"},
		{"/etc/cron.d/x", "absolute"},
		{"../x", "escapes the project"},
		{"a/../../x", "escapes the project"},
		{"a/./b", "not a clean path"},
		{"a//b", "not a clean path"},
		{".git/hooks/pre-commit", "lies in .git"},
		{"sub/.GIT/config", "lies in .git"},
		{"a\\..\\b", "backslash"},
		{"link/planted", "resolves outside the project through a symlink"},
	} {
		doc, hash := fileChangeArchive(t, tc.path, "{\"servers\":[]} "+tc.path)
		msg := k.mustFail(t, "BAD_INPUT", importQ, map[string]any{"d": doc, "p": prj})
		if !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "line 4: ") {
			t.Fatalf("%s: message %q, want line 4 and %q", tc.path, msg, tc.want)
		}
		if k.blobs.Has(hash) {
			t.Fatalf("%s: the refused import stored its blob", tc.path)
		}
	}
	var s struct{ Sessions []struct{ ID string } }
	k.mustDo(t, `{ sessions(includeChildren: true) { id } }`, nil, &s)
	if len(s.Sessions) != 0 {
		t.Fatalf("sessions after refused imports: %+v", s.Sessions)
	}
	if ents, _ := os.ReadDir(data); len(ents) != 0 {
		t.Fatalf("the data directory got %d entries", len(ents))
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("the symlink's target got %d entries", len(ents))
	}

	// Without a project the session works in its own new scratch
	// directory: the data-directory rule has nothing to refuse, the lexical
	// rules still hold.
	doc, _ := fileChangeArchive(t, "../escape", "x")
	if msg := k.mustFail(t, "BAD_INPUT", importQ, map[string]any{"d": doc}); !strings.Contains(msg, "line 4: fileChanges[1].path") {
		t.Fatalf("message %q", msg)
	}
	// A path inside the project is fine.
	doc, _ = fileChangeArchive(t, "src/main.go", "package main")
	var imp struct{ ImportSession struct{ ID string } }
	k.mustDo(t, importQ, map[string]any{"d": doc, "p": prj}, &imp)
	if imp.ImportSession.ID == "" {
		t.Fatal("no session imported")
	}
}
