package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
)

// foya sessions import refuses a document whose file change points into
// the kernel's data directory (the project is a "$HOME" that holds it):
// exit 1 with the BAD_INPUT naming the line, no session, no blob, and
// nothing in the data directory.
func TestSessionsImportRefusesAFileChangeIntoTheDataDirectory(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "foya")
	k := startKernel(t, data)
	var o outputs

	content := []byte(`{"servers":[{"name":"x","transport":"STDIO","command":"sh"}]}`)
	sum := sha256.Sum256(content)
	hash := hex.EncodeToString(sum[:])
	now := time.Now().UTC()
	mk := func(seq int64, typ core.EventType, p any) core.Event {
		ev, err := core.NewEvent("ses_src", typ, p)
		if err != nil {
			t.Fatal(err)
		}
		ev.Seq, ev.At = seq, now
		return ev
	}
	events := []core.Event{
		mk(1, core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: "ses_src", ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: now}}),
		mk(2, core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleUser, Text: "configure"}}),
		mk(3, core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleTool, Text: "written", ToolCallID: "c1", ToolName: "write",
			FileChanges: []core.FileChange{{Path: ".local/share/foya/mcp.json", Action: core.FileCreate, AfterHash: hash}}}}),
	}
	var doc bytes.Buffer
	if err := archive.WriteSessionArchive(&doc, archive.ArchiveHeader{SessionID: "ses_src", ExportedAt: now}, events, []string{hash}, map[string][]byte{hash: content}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "evil.jsonl")
	if err := os.WriteFile(file, doc.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	listData := func() []string {
		var names []string
		filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				names = append(names, p)
			}
			return nil
		})
		return names
	}
	before := listData()
	r := o.runIn(t, home, nil, "sessions", "import", file, "--project", home, "--addr", k.addr)
	if r.code != 1 || !strings.Contains(r.stderr, "(BAD_INPUT)") || !strings.Contains(r.stderr, `line 4: fileChanges[0].path ".local/share/foya/mcp.json" lies in the kernel's data directory`) {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ss := k.listSessions(t, true)
	if len(ss.Sessions) != 0 {
		t.Fatalf("sessions after the refused import: %+v", ss.Sessions)
	}
	after := listData()
	if strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("the data directory changed:\nbefore %v\nafter  %v", before, after)
	}
	for _, p := range after {
		if strings.HasSuffix(p, "mcp.json") || strings.Contains(p, hash) {
			t.Fatalf("planted: %s", p)
		}
	}
}
