package graph_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

type rewindFileJSON struct {
	Path, Action string
	Restorable   bool
	Reason       *string
	Restored     bool
}

type previewJSON struct {
	HeadSeq        int64
	FileStateToken string
	Text           string
	Files          []rewindFileJSON
}

const previewQ = `mutation($s: ID!, $m: Int!) { previewRewind(sessionId: $s, messageSeq: $m) { headSeq fileStateToken text files { path action restorable reason restored } } }`
const confirmQ = `mutation($s: ID!, $m: Int!, $h: Int!, $t: String!) { confirmRewind(sessionId: $s, messageSeq: $m, headSeq: $h, fileStateToken: $t) { text session { headSeq } files { path action restorable reason restored } } }`

func (k *testKernel) preview(t *testing.T, sid string, seq int64) previewJSON {
	t.Helper()
	var out struct{ PreviewRewind previewJSON }
	k.mustDo(t, previewQ, map[string]any{"s": sid, "m": seq}, &out)
	return out.PreviewRewind
}

func projectSession(t *testing.T, k *testKernel, dir string) string {
	t.Helper()
	var p struct{ CreateProject struct{ ID string } }
	k.mustDo(t, `mutation($p: String!) { createProject(input: {path: $p}) { id } }`, map[string]any{"p": dir}, &p)
	sid := k.chatSession(t, nil, "BYPASS")
	k.mustDo(t, `mutation($s: ID!, $p: ID) { updateSession(id: $s, input: {projectId: $p}) { id } }`, map[string]any{"s": sid, "p": p.CreateProject.ID}, nil)
	return sid
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFileToolsAndRewind(t *testing.T) {
	k := newTestKernel(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keep.txt"), "original line\n")
	writeFile(t, filepath.Join(dir, "del.txt"), "bye\n")
	sid := projectSession(t, k, dir)
	w := k.watch(t, sid)

	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c1", "write", `{"path":"new.txt","content":"hello\n"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c2", "edit", `{"path":"keep.txt","old_string":"original","new_string":"changed"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c3", "bash", `{"command":"rm del.txt && echo removed"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "All done."))
	k.send(t, sid, "set things up")
	w.turnEnd()
	k.fake.Enqueue(openaitest.TextStream(testModel, "ok"))
	k.send(t, sid, "thanks")
	w.turnEnd()

	if readFile(t, filepath.Join(dir, "new.txt")) != "hello\n" || readFile(t, filepath.Join(dir, "keep.txt")) != "changed line\n" {
		t.Fatal("tools did not change the files")
	}
	if _, err := os.Stat(filepath.Join(dir, "del.txt")); !os.IsNotExist(err) {
		t.Fatal("bash did not delete del.txt")
	}

	// File change records with hashes and a UI-only diff.
	var s struct {
		Session struct {
			Messages []struct {
				Seq         int64
				Role        string
				Diff        *string
				FileChanges []struct{ Path, Action, BeforeHash, AfterHash string }
			}
		}
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { messages { seq role diff fileChanges { path action beforeHash afterHash } } } }`, map[string]any{"s": sid}, &s)
	var changes []string
	for _, m := range s.Session.Messages {
		for _, fc := range m.FileChanges {
			changes = append(changes, fc.Path+":"+fc.Action)
			switch fc.Path {
			case "new.txt":
				if fc.BeforeHash != "" || fc.AfterHash != sha("hello\n") {
					t.Fatalf("new.txt change %+v", fc)
				}
			case "keep.txt":
				if fc.BeforeHash != sha("original line\n") || fc.AfterHash != sha("changed line\n") {
					t.Fatalf("keep.txt change %+v", fc)
				}
			case "del.txt":
				if fc.BeforeHash != sha("bye\n") || fc.AfterHash != "" {
					t.Fatalf("del.txt change %+v", fc)
				}
			}
			if m.Diff == nil || !strings.Contains(*m.Diff, "@@") {
				t.Fatalf("no diff on the tool message of %s", fc.Path)
			}
		}
	}
	if strings.Join(changes, ",") != "new.txt:CREATE,keep.txt:MODIFY,del.txt:DELETE" {
		t.Fatalf("changes %v", changes)
	}
	for _, r := range k.fake.Requests() {
		if strings.Contains(string(r.Body), "+changed line") || strings.Contains(string(r.Body), "@@ ") {
			t.Fatal("a UI diff reached the model")
		}
	}

	userSeq := s.Session.Messages[0].Seq
	k.mustFail(t, "BAD_INPUT", previewQ, map[string]any{"s": sid, "m": s.Session.Messages[1].Seq})
	p := k.preview(t, sid, userSeq)
	if p.Text != "set things up" || len(p.Files) != 3 {
		t.Fatalf("preview %+v", p)
	}
	for _, f := range p.Files {
		want := map[string]string{"new.txt": "delete", "keep.txt": "restore", "del.txt": "restore"}[f.Path]
		if f.Action != want || !f.Restorable {
			t.Fatalf("preview file %+v, want %s restorable", f, want)
		}
	}

	// Someone edits keep.txt outside the session: the token no longer
	// matches, and a new preview says keep.txt cannot be restored.
	writeFile(t, filepath.Join(dir, "keep.txt"), "edited by hand\n")
	k.mustFail(t, "CONFLICT", confirmQ, map[string]any{"s": sid, "m": userSeq, "h": p.HeadSeq, "t": p.FileStateToken})
	p = k.preview(t, sid, userSeq)
	for _, f := range p.Files {
		if f.Path == "keep.txt" && (f.Restorable || f.Reason == nil || !strings.Contains(*f.Reason, "outside")) {
			t.Fatalf("hand-edited file %+v", f)
		}
	}
	writeFile(t, filepath.Join(dir, "keep.txt"), "changed line\n")
	p = k.preview(t, sid, userSeq)

	// History moves: CONFLICT.
	k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {title: "moved"}) { id } }`, map[string]any{"s": sid}, nil)
	k.mustFail(t, "CONFLICT", confirmQ, map[string]any{"s": sid, "m": userSeq, "h": p.HeadSeq, "t": p.FileStateToken})
	p = k.preview(t, sid, userSeq)

	var res struct {
		ConfirmRewind struct {
			Text  string
			Files []rewindFileJSON
		}
	}
	k.mustDo(t, confirmQ, map[string]any{"s": sid, "m": userSeq, "h": p.HeadSeq, "t": p.FileStateToken}, &res)
	if res.ConfirmRewind.Text != "set things up" {
		t.Fatalf("text %q", res.ConfirmRewind.Text)
	}
	for _, f := range res.ConfirmRewind.Files {
		if !f.Restored {
			t.Fatalf("not restored: %+v", f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
		t.Fatal("created file not deleted")
	}
	if readFile(t, filepath.Join(dir, "keep.txt")) != "original line\n" || readFile(t, filepath.Join(dir, "del.txt")) != "bye\n" {
		t.Fatal("files not put back exactly")
	}
	if msgs := k.messages(t, sid); len(msgs) != 0 {
		t.Fatalf("active messages after rewinding to the first: %+v", msgs)
	}
	var all struct {
		Session struct {
			Messages []struct {
				Text   string
				Active bool
			}
		}
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { messages(includeInactive: true) { text active } } }`, map[string]any{"s": sid}, &all)
	if len(all.Session.Messages) != len(s.Session.Messages) || all.Session.Messages[0].Active || all.Session.Messages[0].Text != "set things up" {
		t.Fatalf("inactive history %+v", all.Session.Messages)
	}
}

// A crash between restoring files and recording the rewind leaves files
// restored and history not yet rewound; a new preview sees the files as
// already restored, and confirming completes the rewind.
func TestRewindRecoversAfterACrashBetweenRestoreAndEvent(t *testing.T) {
	k := newTestKernel(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), "one\n")
	sid := projectSession(t, k, dir)
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c1", "write", `{"path":"a.txt","content":"two\n"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "Done."))
	k.send(t, sid, "change a")
	w.turnEnd()
	userSeq := k.messages(t, sid)[0].Seq

	// The crash: the file was put back, the event never written.
	writeFile(t, filepath.Join(dir, "a.txt"), "one\n")
	p := k.preview(t, sid, userSeq)
	if len(p.Files) != 1 || p.Files[0].Action != "none" || !p.Files[0].Restorable {
		t.Fatalf("preview after crash %+v", p)
	}
	k.mustDo(t, confirmQ, map[string]any{"s": sid, "m": userSeq, "h": p.HeadSeq, "t": p.FileStateToken}, nil)
	if msgs := k.messages(t, sid); len(msgs) != 0 || readFile(t, filepath.Join(dir, "a.txt")) != "one\n" {
		t.Fatalf("after recovery: %d messages", len(msgs))
	}
}

func TestRewindRefusedWhileATurnRuns(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.TextStream(testModel, "one"), hanging())
	k.send(t, sid, "first")
	w.turnEnd()
	userSeq := k.messages(t, sid)[0].Seq
	p := k.preview(t, sid, userSeq)
	k.send(t, sid, "second")
	w.next("message_delta")
	k.mustFail(t, "CONFLICT", confirmQ, map[string]any{"s": sid, "m": userSeq, "h": p.HeadSeq, "t": p.FileStateToken})
	k.mustDo(t, `mutation($s: ID!) { stopTurn(sessionId: $s) { id } }`, map[string]any{"s": sid}, nil)
}

// A turn whose request had an attachment, a browser element and a command is
// rewound like any other, and the files its sub-agent changed are restored.
func TestRewindRichInputAndSubAgentFiles(t *testing.T) {
	k := newTestKernel(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keep.txt"), "before\n")
	sid := projectSession(t, k, dir)
	w := k.watch(t, sid)
	att := k.upload(t, "shot.png", pngBytes(t))
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_task", "task", `{"prompt":"edit keep.txt and add kid.txt"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "k1", "write", `{"path":"kid.txt","content":"child\n"}`), ""),
		chunk(toolCallDelta(1, "k2", "write", `{"path":"keep.txt","content":"after\n"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "child done"), openaitest.TextStream(testModel, "parent done"))
	k.mustDo(t, `mutation($s: ID!, $a: [ID!], $b: [BrowserElementInput!]) { sendMessage(sessionId: $s, input: {text: "look", command: "review", attachmentIds: $a, browserElements: $b}) { turnStarted } }`,
		map[string]any{"s": sid, "a": []string{att}, "b": []any{map[string]any{"url": "https://example.com/", "text": "Buy"}}}, nil)
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	if readFile(t, filepath.Join(dir, "kid.txt")) != "child\n" || readFile(t, filepath.Join(dir, "keep.txt")) != "after\n" {
		t.Fatal("the sub-agent did not write")
	}
	msgs := k.messages(t, sid)
	var p struct {
		PreviewRewind struct {
			HeadSeq         int64
			FileStateToken  string
			Text, Command   string
			Attachments     []struct{ ID string }
			BrowserElements []struct{ URL, Text string }
			Files           []rewindFileJSON
		}
	}
	k.mustDo(t, `mutation($s: ID!, $m: Int!) { previewRewind(sessionId: $s, messageSeq: $m) { headSeq fileStateToken text command attachments { id } browserElements { url text } files { path action restorable reason restored } } }`,
		map[string]any{"s": sid, "m": msgs[0].Seq}, &p)
	pr := p.PreviewRewind
	if pr.Text != "look" || pr.Command != "review" || len(pr.Attachments) != 1 || pr.Attachments[0].ID != att || len(pr.BrowserElements) != 1 || pr.BrowserElements[0].Text != "Buy" {
		t.Fatalf("preview input %+v", pr)
	}
	if len(pr.Files) != 2 || pr.Files[0].Path != "kid.txt" || pr.Files[0].Action != "delete" || pr.Files[1].Path != "keep.txt" || pr.Files[1].Action != "restore" || !pr.Files[0].Restorable || !pr.Files[1].Restorable {
		t.Fatalf("preview files %+v", pr.Files)
	}
	var c struct {
		ConfirmRewind struct {
			Command     string
			Attachments []struct{ ID string }
			Files       []rewindFileJSON
		}
	}
	k.mustDo(t, `mutation($s: ID!, $m: Int!, $h: Int!, $t: String!) { confirmRewind(sessionId: $s, messageSeq: $m, headSeq: $h, fileStateToken: $t) { command attachments { id } files { path restored } } }`,
		map[string]any{"s": sid, "m": msgs[0].Seq, "h": pr.HeadSeq, "t": pr.FileStateToken}, &c)
	if c.ConfirmRewind.Command != "review" || len(c.ConfirmRewind.Attachments) != 1 || !c.ConfirmRewind.Files[0].Restored || !c.ConfirmRewind.Files[1].Restored {
		t.Fatalf("confirm %+v", c)
	}
	if _, err := os.Stat(filepath.Join(dir, "kid.txt")); !os.IsNotExist(err) {
		t.Fatal("kid.txt survived the rewind")
	}
	if readFile(t, filepath.Join(dir, "keep.txt")) != "before\n" {
		t.Fatal("keep.txt not restored")
	}
	if len(k.messages(t, sid)) != 0 {
		t.Fatal("history not rewound")
	}
	// The attachment is still stored: the same input can be sent again.
	k.fake.Enqueue(openaitest.TextStream(testModel, "again"))
	k.mustDo(t, `mutation($s: ID!, $a: [ID!]) { sendMessage(sessionId: $s, input: {text: "look", attachmentIds: $a}) { turnStarted } }`, map[string]any{"s": sid, "a": []string{att}}, nil)
	w.turnEnd()
}

// Rewind obeys the write tool's rules at the moment it writes: in a project
// at a "$HOME" that holds the data directory, a directory swapped for a
// symlink into the data directory between the preview and the confirm is
// not followed (the old token no longer matches; a new preview says why),
// nothing is written there, and a deleted script comes back with its mode.
func TestRewindRestoreIgnoresPlantedSymlinkAndKeepsMode(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "foya")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	k := newTestKernel(t, func(c *engine.Config) { c.DataDir = data })
	if err := os.MkdirAll(filepath.Join(home, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, "sub", "conf.json"), "original\n")
	if err := os.WriteFile(filepath.Join(home, "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(home, "run.sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	sid := projectSession(t, k, home)
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c1", "write", `{"path":"sub/conf.json","content":"changed\n"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c2", "bash", `{"command":"rm run.sh"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "Done."))
	k.send(t, sid, "change things")
	w.turnEnd()
	userSeq := k.messages(t, sid)[0].Seq
	p1 := k.preview(t, sid, userSeq)
	if len(p1.Files) != 2 || !p1.Files[0].Restorable || !p1.Files[1].Restorable {
		t.Fatalf("preview %+v", p1)
	}

	// The model's process plants the symlink: sub now leads into the data
	// directory, where a file with the content the session left waits.
	if err := os.Rename(filepath.Join(home, "sub"), filepath.Join(home, "sub.moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".local/share/foya", filepath.Join(home, "sub")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(data, "conf.json"), "changed\n")
	k.mustFail(t, "CONFLICT", confirmQ, map[string]any{"s": sid, "m": userSeq, "h": p1.HeadSeq, "t": p1.FileStateToken})

	p2 := k.preview(t, sid, userSeq)
	for _, f := range p2.Files {
		if f.Path == "sub/conf.json" && (f.Restorable || f.Reason == nil || !strings.Contains(*f.Reason, "symlink")) {
			t.Fatalf("file behind a symlink %+v", f)
		}
	}
	var res struct {
		ConfirmRewind struct{ Files []rewindFileJSON }
	}
	k.mustDo(t, confirmQ, map[string]any{"s": sid, "m": userSeq, "h": p2.HeadSeq, "t": p2.FileStateToken}, &res)
	if got := readFile(t, filepath.Join(data, "conf.json")); got != "changed\n" {
		t.Fatalf("the data directory's file became %q", got)
	}
	if ents, _ := os.ReadDir(data); len(ents) != 1 {
		t.Fatalf("the data directory has %d entries, want the 1 planted", len(ents))
	}
	fi, err := os.Stat(filepath.Join(home, "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o750 || readFile(t, filepath.Join(home, "run.sh")) != "#!/bin/sh\necho hi\n" {
		t.Fatalf("restored script: %v %v, want mode 0750", fi, err)
	}
}

// A sub-agent of a session without a project works in its parent's scratch
// directory, as one of a project session works in the project: the parent
// reads what the child wrote, and rewinding the parent's turn puts the
// child's files back too.
func TestSubAgentOfScratchSessionSharesItsDirectory(t *testing.T) {
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "c_task", "task", `{"prompt":"write kid.txt"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "k1", "write", `{"path":"kid.txt","content":"from the child\n"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "child done"), openaitest.Response{Events: []string{
		chunk(toolCallDelta(0, "r1", "read", `{"path":"kid.txt"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
	}}, openaitest.TextStream(testModel, "parent done"))
	k.send(t, sid, "delegate")
	if p := w.turnEnd(); p.Status != core.TurnCompleted {
		t.Fatalf("turn %+v", p)
	}
	dir, err := k.engine.WorkDir(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	if readFile(t, filepath.Join(dir, "kid.txt")) != "from the child\n" {
		t.Fatal("the child's file is not in the parent's scratch directory")
	}
	msgs := k.messages(t, sid)
	if m := msgs[len(msgs)-2]; m.Role != "TOOL" || !strings.Contains(m.Text, "from the child") {
		t.Fatalf("the parent's read: %+v", m)
	}
	var p struct {
		PreviewRewind struct {
			HeadSeq        int64
			FileStateToken string
			Files          []rewindFileJSON
		}
	}
	k.mustDo(t, `mutation($s: ID!, $m: Int!) { previewRewind(sessionId: $s, messageSeq: $m) { headSeq fileStateToken files { path action restorable reason restored } } }`,
		map[string]any{"s": sid, "m": msgs[0].Seq}, &p)
	if f := p.PreviewRewind.Files; len(f) != 1 || f[0].Path != "kid.txt" || f[0].Action != "delete" || !f[0].Restorable {
		t.Fatalf("preview files %+v", f)
	}
	k.mustDo(t, `mutation($s: ID!, $m: Int!, $h: Int!, $t: String!) { confirmRewind(sessionId: $s, messageSeq: $m, headSeq: $h, fileStateToken: $t) { text } }`,
		map[string]any{"s": sid, "m": msgs[0].Seq, "h": p.PreviewRewind.HeadSeq, "t": p.PreviewRewind.FileStateToken}, nil)
	if _, err := os.Stat(filepath.Join(dir, "kid.txt")); !os.IsNotExist(err) {
		t.Fatal("kid.txt survived the rewind")
	}
}
