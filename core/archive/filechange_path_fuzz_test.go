package archive_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
)

// archiveWithFileChange is a document whose line 3 is a tool message with
// one file change of path p.
func archiveWithFileChange(t testing.TB, p string) []byte {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(seq int64, typ core.EventType, v any) core.Event {
		ev, err := core.NewEvent("ses_src", typ, v)
		if err != nil {
			t.Fatal(err)
		}
		ev.Seq, ev.At = seq, now
		return ev
	}
	events := []core.Event{
		mk(1, core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: "ses_src", ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: now}}),
		mk(2, core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleTool, Text: "ok", ToolCallID: "c1", ToolName: "write",
			FileChanges: []core.FileChange{{Path: p, Action: core.FileCreate, AfterHash: strings.Repeat("a", 64), BeforeMode: 0o755}}}}),
	}
	var doc bytes.Buffer
	if err := archive.WriteSessionArchive(&doc, archive.ArchiveHeader{SessionID: "ses_src", ExportedAt: now}, events, nil, nil); err != nil {
		t.Fatal(err)
	}
	return doc.Bytes()
}

// FuzzArchiveFileChange drives the import's file-change path validation
// with arbitrary paths (seeds in testdata/fuzz/FuzzArchiveFileChange). A
// path the parser accepts is relative, clean, free of .. and .git
// components and stays inside any directory it is joined to; a refusal is
// a BAD_INPUT naming line 3, the message's line.
func FuzzArchiveFileChange(f *testing.F) {
	for _, p := range []string{"a.txt", "src/x/y.go", ".local/share/foya/mcp.json", "/abs", "../up", "a/../../b", ".git/config", "A/.GIT/x", `a\b`, "a//b", "a/", "./a", ""} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !utf8.ValidString(p) {
			// The writer encodes invalid UTF-8 as U+FFFD: the document
			// carries that path.
			var b strings.Builder
			for i := 0; i < len(p); {
				r, n := utf8.DecodeRuneInString(p[i:])
				if r == utf8.RuneError && n == 1 {
					b.WriteRune(utf8.RuneError)
				} else {
					b.WriteString(p[i : i+n])
				}
				i += n
			}
			p = b.String()
		}
		a, err := archive.ParseSessionArchive(bytes.NewReader(archiveWithFileChange(t, p)))
		verr := archive.ValidFileChangePath(p)
		if err != nil {
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Code != core.CodeBadInput || !strings.HasPrefix(ce.Message, "line 3: ") {
				t.Fatalf("refusal %v is not a BAD_INPUT naming line 3", err)
			}
			if verr == nil {
				t.Fatalf("the document with valid path %q was refused: %v", p, err)
			}
			return
		}
		if verr != nil {
			t.Fatalf("path %q accepted by the parser, refused by ValidFileChangePath: %v", p, verr)
		}
		if len(a.FileChanges) != 1 || a.FileChanges[0].Path != p || a.FileChanges[0].Line != 3 {
			t.Fatalf("recorded file changes %+v", a.FileChanges)
		}
		root := "/project/root"
		joined := filepath.Join(root, filepath.FromSlash(p))
		rel, rerr := filepath.Rel(root, joined)
		switch {
		case filepath.IsAbs(p) || strings.HasPrefix(p, "/"):
			t.Fatalf("absolute path %q accepted", p)
		case rerr != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || !strings.HasPrefix(joined, root+"/"):
			t.Fatalf("path %q leaves the project: %s", p, joined)
		case rel != p:
			t.Fatalf("path %q is not clean (joins as %q)", p, rel)
		}
		for c := range strings.SplitSeq(p, "/") {
			if c == ".." || c == "." || c == "" || strings.EqualFold(c, ".git") {
				t.Fatalf("path %q has component %q", p, c)
			}
		}
		if strings.ContainsAny(p, "\x00\\") {
			t.Fatalf("path %q has a NUL or backslash", p)
		}
	})
}

func TestValidFileChangePath(t *testing.T) {
	for p, want := range map[string]string{
		"a.txt": "", "src/x/y.go": "", ".gitignore": "", "a/.github/w.yml": "", "...": "", "a..b/c": "",
		"": "empty", "/etc/passwd": "absolute", "../x": "escapes", "a/../../x": "escapes", "..": "escapes",
		".git": ".git", "x/.Git/HEAD": ".git", "a//b": "clean", "a/": "clean", "./a": "clean",
		`a\b`: "backslash", "a\x00b": "control", "a\nb": "control",
		strings.Repeat("a", core.MaxFileChangePath+1): "longer",
	} {
		err := archive.ValidFileChangePath(p)
		if want == "" {
			if err != nil {
				t.Errorf("%q refused: %v", p, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", p, err, want)
		}
	}
}
