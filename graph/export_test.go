package graph_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

const exportQ = `query($s: ID!) { exportSession(id: $s) }`
const importQ = `mutation($d: String!, $p: ID) { importSession(data: $d, projectId: $p) { id source connectionId model headSeq project { id } } }`

type importedJSON struct {
	ID, Source          string
	ConnectionID, Model *string
	HeadSeq             int64
	Project             *struct{ ID string }
}

// history is everything the API shows of a session's history: the event
// log (client payloads) and every message, inactive ones included.
func (k *testKernel) history(t *testing.T, sid string) string {
	t.Helper()
	var out struct {
		Events  json.RawMessage
		Session struct {
			Title    *string
			Messages json.RawMessage
			Usage    json.RawMessage
		}
	}
	k.mustDo(t, `query($s: ID!) {
		events(sessionId: $s, limit: 5000) { seq type at payload }
		session(id: $s) { title usage { inputTokens outputTokens totalTokens cachedTokens cost }
			messages(includeInactive: true) { seq role text reasoning toolCalls { id name input } toolCallId toolName isError
				attachments { id name kind mediaType size width height sha256 } browserElements { url } command
				turnStatus turnReason startedAt finishedAt turnStartedAt turnFinishedAt active
				fileChanges { path action beforeHash afterHash bytesMissing } diff interrupted
				segments { kind text toolCallId } structuredContent source } } }`, map[string]any{"s": sid}, &out)
	raw, _ := json.Marshal(out)
	return string(raw)
}

var attIDRe = regexp.MustCompile(`att_[0-9a-f]{24}`)

// sameModuloIDs compares two histories with the session ids, attachment ids
// and the imported session's source taken out.
func sameModuloIDs(t *testing.T, a, aID, b, bID string) {
	t.Helper()
	norm := func(s, id string) string {
		s = strings.ReplaceAll(s, id, "SID")
		s = strings.ReplaceAll(s, aID, "SID")
		s = strings.ReplaceAll(s, `,"source":"import:SID"`, "")
		return attIDRe.ReplaceAllString(s, "ATT")
	}
	na, nb := norm(a, aID), norm(b, bID)
	if na != nb {
		i := 0
		for i < len(na) && i < len(nb) && na[i] == nb[i] {
			i++
		}
		t.Fatalf("histories differ at byte %d:\noriginal: …%s\nimported: …%s", i, na[max(0, i-200):min(len(na), i+200)], nb[max(0, i-200):min(len(nb), i+200)])
	}
}

// A session with an image attachment, file changes, a rewind and priced
// usage is exported and imported back: the new session's history is the
// original's (new ids, same content); imported in a second kernel, its
// attachment and the bytes rewind needs came along; usage of an imported
// session does not count in usageTotals.
func TestExportImportRoundTrip(t *testing.T) {
	k := newTestKernel(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keep.txt"), "original line\n")
	sid := projectSession(t, k, dir)
	var proj struct {
		Session struct{ Project struct{ ID string } }
	}
	k.mustDo(t, `query($s: ID!) { session(id: $s) { project { id } } }`, map[string]any{"s": sid}, &proj)
	att := k.upload(t, "dot.png", pngBytes(t))
	w := k.watch(t, sid)

	k.fake.Enqueue(openaitest.Response{Events: []string{
		chunk(map[string]any{"role": "assistant", "reasoning_content": "Editing."}, ""),
		chunk(toolCallDelta(0, "c1", "edit", `{"path":"keep.txt","old_string":"original","new_string":"changed"}`), ""),
		chunk(map[string]any{}, "tool_calls"),
		openaitest.UsageChunk(testModel, 100, 20, 40),
	}}, openaitest.TextStream(testModel, "Done."))
	k.mustDo(t, `mutation($s: ID!, $a: [ID!]) { sendMessage(sessionId: $s, input: {text: "edit keep.txt", attachmentIds: $a}) { turnStarted } }`,
		map[string]any{"s": sid, "a": []string{att}}, nil)
	w.turnEnd()
	k.fake.Enqueue(openaitest.TextStream(testModel, "second"))
	k.send(t, sid, "a second question")
	w.turnEnd()
	// Rewind the second question away, then ask a third.
	msgs := k.messages(t, sid)
	var second int64
	for _, m := range msgs {
		if m.Role == "USER" && m.Text == "a second question" {
			second = m.Seq
		}
	}
	pv := k.preview(t, sid, second)
	k.mustDo(t, confirmQ, map[string]any{"s": sid, "m": second, "h": pv.HeadSeq, "t": pv.FileStateToken}, nil)
	k.fake.Enqueue(openaitest.TextStream(testModel, "third"))
	k.send(t, sid, "a third question")
	w.turnEnd()

	// An import never grants BYPASS (see TestImportRefusesBadDocuments): ask first.
	k.mustDo(t, `mutation($s: ID!) { updateSession(id: $s, input: {approvalMode: ASK}) { id } }`, map[string]any{"s": sid}, nil)

	var totalsBefore struct{ UsageTotals struct{ TotalTokens int64 } }
	k.mustDo(t, `{ usageTotals { totalTokens } }`, nil, &totalsBefore)

	var exp struct{ ExportSession string }
	k.mustDo(t, exportQ, map[string]any{"s": sid}, &exp)
	doc := exp.ExportSession
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	var header struct {
		Format  string
		Version int
		Events  int
		Blobs   int
	}
	if err := json.Unmarshal([]byte(lines[0]), &header); err != nil || header.Format != "foya.session" || header.Version != 1 {
		t.Fatalf("header %s: %v", lines[0], err)
	}
	// The png, and the before and after bytes of keep.txt.
	if header.Blobs != 3 || len(lines) != 1+header.Events+header.Blobs {
		t.Fatalf("header %+v for %d lines", header, len(lines))
	}
	if strings.Contains(doc, "providerState") {
		t.Fatal("the export carries provider-native state")
	}

	var imp struct{ ImportSession importedJSON }
	k.mustDo(t, importQ, map[string]any{"d": doc, "p": proj.Session.Project.ID}, &imp)
	got := imp.ImportSession
	if got.ID == sid || got.Source != "import:"+sid || got.Project == nil || got.Project.ID != proj.Session.Project.ID ||
		deref(got.Model) != testModel || got.ConnectionID == nil || int(got.HeadSeq) != header.Events {
		t.Fatalf("imported session %+v", got)
	}
	sameModuloIDs(t, k.history(t, sid), sid, k.history(t, got.ID), got.ID)
	var ids struct {
		A struct {
			Messages []struct{ Attachments []struct{ ID string } }
		}
	}
	k.mustDo(t, `query($s: ID!) { a: session(id: $s) { messages { attachments { id } } } }`, map[string]any{"s": got.ID}, &ids)
	if newAtt := ids.A.Messages[0].Attachments[0].ID; newAtt == att {
		t.Fatal("the imported attachment kept its id")
	}

	// Imported usage is the session's, not the kernel's spending.
	var totalsAfter struct{ UsageTotals struct{ TotalTokens int64 } }
	k.mustDo(t, `{ usageTotals { totalTokens } }`, nil, &totalsAfter)
	if totalsAfter.UsageTotals != totalsBefore.UsageTotals {
		t.Fatalf("usageTotals moved from %+v to %+v on import", totalsBefore, totalsAfter)
	}

	// Another kernel: the attachment and the bytes rewind needs came along;
	// the connection is not there, so the session is unbound.
	k2 := newTestKernel(t)
	dir2 := t.TempDir()
	writeFile(t, filepath.Join(dir2, "keep.txt"), "changed line\n")
	var p2 struct{ CreateProject struct{ ID string } }
	k2.mustDo(t, `mutation($p: String!) { createProject(input: {path: $p}) { id } }`, map[string]any{"p": dir2}, &p2)
	var imp2 struct{ ImportSession importedJSON }
	k2.mustDo(t, importQ, map[string]any{"d": doc, "p": p2.CreateProject.ID}, &imp2)
	if imp2.ImportSession.ConnectionID != nil || imp2.ImportSession.Model != nil {
		t.Fatalf("imported into a kernel without the connection: %+v", imp2.ImportSession)
	}
	sid2 := imp2.ImportSession.ID
	first := k2.messages(t, sid2)[0]
	pv2 := k2.preview(t, sid2, first.Seq)
	if len(pv2.Files) != 1 || pv2.Files[0].Path != "keep.txt" || !pv2.Files[0].Restorable {
		t.Fatalf("rewind preview in the other kernel %+v", pv2)
	}
	var att2 struct {
		Session struct {
			Messages []struct{ Attachments []struct{ ID string } }
		}
	}
	k2.mustDo(t, `query($s: ID!) { session(id: $s) { messages { attachments { id } } } }`, map[string]any{"s": sid2}, &att2)
	conn2 := k2.createConn(t, map[string]any{"name": "fake", "baseUrl": k2.fake.BaseURL(), "models": []any{map[string]any{"id": testModel}}})
	k2.mustDo(t, `mutation($s: ID!, $c: ID, $m: String) { updateSession(id: $s, input: {connectionId: $c, model: $m}) { id } }`,
		map[string]any{"s": sid2, "c": conn2.ID, "m": testModel}, nil)
	w2 := k2.watch(t, sid2)
	k2.fake.Enqueue(openaitest.TextStream(testModel, "I see a dot."))
	k2.mustDo(t, `mutation($s: ID!, $a: [ID!]) { sendMessage(sessionId: $s, input: {text: "again", attachmentIds: $a}) { turnStarted } }`,
		map[string]any{"s": sid2, "a": []string{att2.Session.Messages[0].Attachments[0].ID}}, nil)
	w2.turnEnd()
	png := base64.StdEncoding.EncodeToString(pngBytes(t))
	if body := string(k2.fake.LastRequest().Body); strings.Count(body, png) != 2 || !strings.Contains(body, "edit keep.txt") {
		t.Fatalf("the imported history and attachment did not reach the model: %s", body)
	}

	// The same document through importSessionFile (multipart).
	resp := k2.importFile(t, doc)
	if len(resp.Errors) > 0 {
		t.Fatalf("importSessionFile: %+v", resp.Errors)
	}
}

// importFile posts doc as the file of importSessionFile.
func (k *testKernel) importFile(t *testing.T, doc string) gqlResponse {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	ops, _ := json.Marshal(map[string]any{"query": `mutation($f: Upload!) { importSessionFile(file: $f) { id headSeq } }`, "variables": map[string]any{"f": nil}})
	mw.WriteField("operations", string(ops))
	mw.WriteField("map", `{"0": ["variables.f"]}`)
	fw, _ := mw.CreateFormFile("0", "s.jsonl")
	fw.Write([]byte(doc))
	mw.Close()
	resp, err := http.Post(k.srv.URL+"/graphql", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out gqlResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("importSessionFile: %s", raw)
	}
	return out
}

// A document is untrusted: every bad line is refused with BAD_INPUT naming
// it, and nothing of a refused document is written.
func TestImportRefusesBadDocuments(t *testing.T) {
	t.Parallel()
	k := newTestKernel(t)
	sid := k.chatSession(t, nil, "BYPASS")
	att := k.upload(t, "dot.png", pngBytes(t))
	w := k.watch(t, sid)
	k.fake.Enqueue(openaitest.TextStream(testModel, "a dot"))
	k.mustDo(t, `mutation($s: ID!, $a: [ID!]) { sendMessage(sessionId: $s, input: {text: "look", attachmentIds: $a}) { turnStarted } }`,
		map[string]any{"s": sid, "a": []string{att}}, nil)
	w.turnEnd()
	var exp struct{ ExportSession string }
	k.mustDo(t, exportQ, map[string]any{"s": sid}, &exp)
	lines := strings.Split(strings.TrimSuffix(exp.ExportSession, "\n"), "\n")
	last := len(lines) // the blob line's number
	msgLine := 0
	for i, l := range lines {
		if strings.Contains(l, `"type":"message_end"`) && strings.Contains(l, `"role":"user"`) {
			msgLine = i + 1
		}
	}
	header := func(f func(h map[string]any)) string {
		var h map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &h); err != nil {
			t.Fatal(err)
		}
		f(h)
		raw, _ := json.Marshal(h)
		return string(raw)
	}
	edit := func(f func(l []string) []string) string {
		return strings.Join(f(append([]string(nil), lines...)), "\n") + "\n"
	}
	other := []byte("not referred to")
	otherSum := sha(string(other))
	for name, tc := range map[string]struct {
		doc  string
		want string
	}{
		"empty":         {"", "line 1: the document is empty"},
		"not a header":  {edit(func(l []string) []string { l[0] = `{"hello":1}`; return l }), "line 1: not a foya.session header"},
		"other format":  {edit(func(l []string) []string { l[0] = header(func(h map[string]any) { h["format"] = "x" }); return l }), `line 1: format "x"`},
		"newer version": {edit(func(l []string) []string { l[0] = header(func(h map[string]any) { h["version"] = 2 }); return l }), "line 1: version 2: this kernel reads version 1"},
		"seq gap":       {edit(func(l []string) []string { return append(l[:2], l[3:]...) }), "line 3: seq 3: expected 2"},
		"not json":      {edit(func(l []string) []string { l[3] = "{oops"; return l }), "line 4: not a foya.session line"},
		"unknown type": {edit(func(l []string) []string {
			l[3] = strings.Replace(l[3], `"type":"`, `"type":"weird_`, 1)
			return l
		}), `line 4: unknown event type "weird_`},
		"live-only type": {edit(func(l []string) []string {
			l[3] = regexp.MustCompile(`"type":"[a-z_]+"`).ReplaceAllString(l[3], `"type":"message_delta"`)
			return l
		}), "line 4: type \"message_delta\" is live-only"},
		"bad role": {edit(func(l []string) []string {
			l[msgLine-1] = strings.Replace(l[msgLine-1], `"role":"user"`, `"role":"god"`, 1)
			return l
		}), `message role "god"`},
		"truncated": {edit(func(l []string) []string { return l[:len(l)-1] }), "the document ends after 0 of the 1 blobs the header announces (truncated?)"},
		"blob bytes changed": {edit(func(l []string) []string {
			var b map[string]any
			json.Unmarshal([]byte(l[last-1]), &b)
			data, _ := base64.StdEncoding.DecodeString(b["data"].(string))
			data[len(data)-1] ^= 1
			b["data"] = base64.StdEncoding.EncodeToString(data)
			raw, _ := json.Marshal(b)
			l[last-1] = string(raw)
			return l
		}), "data does not match its sha256"},
		"blob missing": {edit(func(l []string) []string {
			l[0] = header(func(h map[string]any) { h["blobs"] = 0 })
			return l[:len(l)-1]
		}), "are not in the document"},
		"unreferenced blob": {edit(func(l []string) []string {
			l[0] = header(func(h map[string]any) { h["blobs"] = 2 })
			raw, _ := json.Marshal(map[string]any{"kind": "blob", "sha256": otherSum, "size": len(other), "data": base64.StdEncoding.EncodeToString(other)})
			return append(l, string(raw))
		}), "is not referred to by any event"},
		"event after blobs": {edit(func(l []string) []string { return append(l, l[2]) }), "an event after the blobs"},
		"two session_created": {edit(func(l []string) []string {
			l[2] = regexp.MustCompile(`"type":"[a-z_]+"`).ReplaceAllString(l[2], `"type":"session_created"`)
			return l
		}), "line 3: session_created must be the first event"},
	} {
		t.Run(name, func(t *testing.T) {
			msg := k.mustFail(t, "BAD_INPUT", importQ, map[string]any{"d": tc.doc})
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("message %q, want it to contain %q", msg, tc.want)
			}
		})
	}
	if !strings.Contains(lines[last-1], `"kind":"blob"`) || msgLine == 0 {
		t.Fatal("the document does not have the expected shape")
	}
	// Nothing was written: still one session.
	var s struct{ Sessions []struct{ ID string } }
	k.mustDo(t, `{ sessions(includeChildren: true) { id } }`, nil, &s)
	if len(s.Sessions) != 1 {
		t.Fatalf("sessions after refused imports: %+v", s.Sessions)
	}
	// A project that does not exist.
	k.mustFail(t, "NOT_FOUND", importQ, map[string]any{"d": exp.ExportSession, "p": "prj_nope"})
	// A document cannot grant permissions: a BYPASS session comes in ASK,
	// with one session_updated more.
	var imp struct {
		ImportSession struct {
			ID           string
			ApprovalMode string
			HeadSeq      int
		}
	}
	k.mustDo(t, `mutation($d: String!) { importSession(data: $d) { id approvalMode headSeq } }`, map[string]any{"d": exp.ExportSession}, &imp)
	var orig struct{ Session struct{ HeadSeq int } }
	k.mustDo(t, `query($s: ID!) { session(id: $s) { headSeq } }`, map[string]any{"s": sid}, &orig)
	if imp.ImportSession.ApprovalMode != "ASK" || imp.ImportSession.HeadSeq != orig.Session.HeadSeq+1 {
		t.Fatalf("imported BYPASS session %+v (original head %d)", imp.ImportSession, orig.Session.HeadSeq)
	}

	// More than a JSON request may carry.
	big := strings.Repeat("x", 9<<20)
	if msg := k.mustFail(t, "BAD_INPUT", importQ, map[string]any{"d": big}); !strings.Contains(msg, "8 MiB") {
		t.Fatalf("oversized import: %q", msg)
	}
}
