package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// hugeDoc is a foya.session document of a session whose messages total
// more than the 16 MiB response limit: hugeCount messages of about 512 KiB,
// one of them (hugeLong) 1.5 MiB of multi-byte text.
const (
	hugeCount = 36
	hugeLong  = 17 // index of the long message
)

func hugeSessionText(i int) string {
	if i == hugeLong {
		// 1.5 MiB of 1-, 2- and 4-byte characters: pages cut inside them.
		return fmt.Sprintf("long %d ", i) + strings.Repeat("é😀a", 1536<<10/7)
	}
	return fmt.Sprintf("message %d ", i) + strings.Repeat(fmt.Sprintf("%c", 'a'+i%26), 512<<10)
}

func writeHugeDoc(t *testing.T, path, connID string) {
	t.Helper()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	meta := core.SessionMeta{ID: "ses_hugeorigin", ConnectionID: connID, Model: "gpt-t", ApprovalMode: core.ApprovalBypass,
		AgentMode: core.AgentExecute, CreatedAt: at}
	created, err := core.NewEvent(meta.ID, core.EventSessionCreated, core.SessionPayload{Session: meta})
	if err != nil {
		t.Fatal(err)
	}
	events := []core.Event{created}
	for i := range hugeCount {
		role := core.RoleUser
		if i%2 == 1 {
			role = core.RoleAssistant
		}
		ev, err := core.NewEvent(meta.ID, core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: role, Text: hugeSessionText(i)}})
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	for i := range events {
		events[i].Seq, events[i].At = int64(i+1), at.Add(time.Duration(i)*time.Second)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := archive.WriteSessionArchive(f, archive.ArchiveHeader{SessionID: meta.ID, ExportedAt: at}, events, nil, nil); err != nil {
		t.Fatal(err)
	}
}

// tokenKernel is a kernel that requires its token (listening beyond
// loopback), reached on 127.0.0.1.
type tokenKernel struct {
	*kernelProc
	base, token string
}

func startTokenKernel(t *testing.T) tokenKernel {
	data := t.TempDir()
	k := startKernel(t, data, "--addr", "0.0.0.0:0")
	raw, err := os.ReadFile(filepath.Join(data, "auth-token"))
	if err != nil {
		t.Fatal(err)
	}
	return tokenKernel{k, "127.0.0.1:" + portOf(t, k.addr), strings.TrimSpace(string(raw))}
}

// query runs a GraphQL query with the token; errors are returned coded.
// The huge-session tests send raw documents on purpose: paging arguments
// built per call, an unpaged read the kernel must refuse, text windows of
// an odd size and the events' truncation marks (selections the typed
// client does not make).
func (k tokenKernel) query(t *testing.T, q string, vars map[string]any, out any) *client.Error {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, "http://"+k.base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+k.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	// One pass over the answer (pages of megabytes, decoded by this
	// race-instrumented binary): data straight into out.
	if out == nil {
		out = new(json.RawMessage)
	}
	r := struct {
		Data   any
		Errors []struct {
			Message    string
			Extensions struct{ Code string }
		}
	}{Data: out}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %.300s (%v)", q, raw, err)
	}
	if len(r.Errors) > 0 {
		return &client.Error{Message: r.Errors[0].Message, Code: r.Errors[0].Extensions.Code}
	}
	return nil
}

type pagedMessage struct {
	Seq       int
	TextBytes int
	Text      string
}

// page reads one page of messages with their texts.
func (k tokenKernel) page(t *testing.T, sid, args string) []pagedMessage {
	t.Helper()
	var d struct {
		Session struct{ Messages []pagedMessage }
	}
	if err := k.query(t, `query($s: ID!) { session(id: $s) { messages(`+args+`) { seq textBytes text } } }`, map[string]any{"s": sid}, &d); err != nil {
		t.Fatalf("messages(%s): %v", args, err)
	}
	return d.Session.Messages
}

// checkAll asserts that msgs are the hugeDoc messages, each exactly once,
// in order.
func checkAll(t *testing.T, msgs []pagedMessage, what string) {
	t.Helper()
	if len(msgs) != hugeCount {
		t.Fatalf("%s: %d messages, want %d", what, len(msgs), hugeCount)
	}
	for i, m := range msgs {
		if want := hugeSessionText(i); m.Text != want || m.TextBytes != len(want) {
			t.Fatalf("%s: message %d (seq %d) is not message %d (%d bytes, want %d)", what, i, m.Seq, i, m.TextBytes, len(want))
		}
		if i > 0 && m.Seq <= msgs[i-1].Seq {
			t.Fatalf("%s: seq %d after %d", what, m.Seq, msgs[i-1].Seq)
		}
	}
}

// A session larger than the response limit stays usable: it is refused
// whole with a coded error naming the paging arguments, read in pages
// forward and backward (every message exactly once), a long text in byte
// pages, exported by the streaming route (token and guard as /graphql),
// re-imported and continued with foya exec -c.
func TestHugeSessionPagesExportsAndContinues(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startTokenKernel(t)
	o := outputs{env: []string{"FOYA_TOKEN=" + k.token}}
	conn := o.addFakeConnection(t, k.base, fake.BaseURL())

	dir := t.TempDir()
	doc := filepath.Join(dir, "huge.jsonl")
	writeHugeDoc(t, doc, conn)
	if fi, _ := os.Stat(doc); fi.Size() < 17<<20 {
		t.Fatalf("document %d bytes: not over the response limit", fi.Size())
	}
	proj := t.TempDir()
	r := o.mustRun(t, "", "sessions", "import", doc, "--addr", k.base, "--project", proj, "--json")
	var imported struct{ Id string }
	if err := json.Unmarshal([]byte(r.stdout), &imported); err != nil || imported.Id == "" {
		t.Fatalf("import: %q %v", r.stdout, err)
	}
	sid := imported.Id

	// Whole: refused, naming the paging arguments (raw: the typed client
	// never sends an unpaged read of a huge session).
	err := k.query(t, `query($s: ID!) { session(id: $s) { messages { seq text } } }`, map[string]any{"s": sid}, nil)
	if err == nil || err.Code != "BAD_INPUT" || !strings.Contains(err.Message, "messages(last: 50)") || !strings.Contains(err.Message, "afterSeq") || !strings.Contains(err.Message, "beforeSeq") {
		t.Fatalf("unpaged messages of a huge session: %v", err)
	}
	// The newest 20.
	last := k.page(t, sid, "last: 20")
	if len(last) != 20 || last[19].Text != hugeSessionText(hugeCount-1) || last[0].Text != hugeSessionText(hugeCount-20) {
		t.Fatalf("messages(last: 20): %d messages", len(last))
	}
	// Forward and backward, in pages of 7.
	var fwd []pagedMessage
	for after := 0; ; {
		p := k.page(t, sid, fmt.Sprintf("first: 7, afterSeq: %d", after))
		if len(p) == 0 {
			break
		}
		fwd, after = append(fwd, p...), p[len(p)-1].Seq
	}
	checkAll(t, fwd, "forward")
	var back []pagedMessage
	p := k.page(t, sid, "last: 7")
	for len(p) > 0 {
		back = append(p, back...)
		p = k.page(t, sid, fmt.Sprintf("last: 7, beforeSeq: %d", p[0].Seq))
	}
	checkAll(t, back, "backward")

	// The long text in byte pages that cut inside characters.
	long := fwd[hugeLong]
	var text strings.Builder
	for off := 0; off < long.TextBytes; off += 100_003 {
		var d struct {
			Session struct{ Messages []struct{ Text string } }
		}
		if err := k.query(t, `query($s: ID!, $a: Int!, $o: Int!) { session(id: $s) { messages(first: 1, afterSeq: $a) { text(offset: $o, limit: 100003) } } }`,
			map[string]any{"s": sid, "a": long.Seq - 1, "o": off}, &d); err != nil {
			t.Fatal(err)
		}
		text.WriteString(d.Session.Messages[0].Text)
	}
	if text.String() != hugeSessionText(hugeLong) {
		t.Fatalf("the long text read in pages differs (%d bytes, want %d)", text.Len(), long.TextBytes)
	}

	// The export route: token and guard as /graphql.
	url := "http://" + k.base + "/sessions/" + sid + "/export"
	checkRouteGuarded(t, url, k.token, "")
	resp, body := getRoute(t, url, k.token, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/jsonl; charset=utf-8" {
		t.Fatalf("export: %d %s %.200s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	missing, _ := http.NewRequest(http.MethodGet, strings.Replace(url, sid, "ses_missing", 1), nil)
	missing.Header.Set("Authorization", "Bearer "+k.token)
	if r2, err := http.DefaultClient.Do(missing); err != nil {
		t.Fatal(err)
	} else {
		b2, _ := io.ReadAll(r2.Body)
		r2.Body.Close()
		if r2.StatusCode != 404 || !strings.Contains(string(b2), `"code":"NOT_FOUND"`) {
			t.Fatalf("export of a missing session: %d %s", r2.StatusCode, b2)
		}
	}
	// session_created, the messages and the import's session_updated (bypass → ask).
	if a, err := archive.ParseSessionArchive(bytes.NewReader(body)); err != nil || len(a.Events) != hugeCount+2 {
		t.Fatalf("exported document: %d bytes, %v", len(body), err)
	}
	// foya sessions export streams the same document (exportedAt aside).
	r = o.mustRun(t, "", "sessions", "export", sid, "--addr", k.base)
	stripAt := regexp.MustCompile(`"exportedAt":"[^"]*"`)
	if got, want := stripAt.ReplaceAllString(r.stdout, ""), stripAt.ReplaceAllString(string(body), ""); got != want {
		t.Fatalf("foya sessions export: %d bytes, the route %d", len(got), len(want))
	}
	// Re-imported from the exported file, the copy pages the same.
	re := filepath.Join(dir, "exported.jsonl")
	if err := os.WriteFile(re, body, 0o600); err != nil {
		t.Fatal(err)
	}
	r = o.mustRun(t, "", "sessions", "import", re, "--addr", k.base, "--json")
	var copied struct{ Id string }
	if err := json.Unmarshal([]byte(r.stdout), &copied); err != nil || copied.Id == "" || copied.Id == sid {
		t.Fatalf("re-import: %q %v", r.stdout, err)
	}
	var again []pagedMessage
	for after := 0; ; {
		p := k.page(t, copied.Id, fmt.Sprintf("first: 10, afterSeq: %d", after))
		if len(p) == 0 {
			break
		}
		again, after = append(again, p...), p[len(p)-1].Seq
	}
	checkAll(t, again, "re-imported")

	// foya sessions show pages a huge session.
	r = o.mustRun(t, "", "sessions", "show", sid, "--addr", k.base)
	if !strings.Contains(r.stdout, "long 17 é😀a") || !strings.Contains(r.stdout, fmt.Sprintf("message %d ", hugeCount-1)) || len(r.stdout) < 17<<20 {
		t.Fatalf("sessions show of a huge session: %d bytes", len(r.stdout))
	}

	// foya exec -c continues it: its history (about 5 million tokens by
	// the kernel's estimate) is compacted first, then the turn runs.
	fake.Enqueue(openaitest.Completion("gpt-t", "Summary: 36 long messages.", "stop", 10, 5), openaitest.TextStream("gpt-t", "Still ", "here."))
	r = o.run(t, "", "exec", "--addr", k.base, "--project", proj, "-c", "go on")
	if r.code != 0 || r.stdout != "Still here.\n" {
		for _, rq := range fake.Requests() {
			t.Logf("request %d bytes: %.300s … %.300s", len(rq.Body), rq.Body, rq.Body[max(0, len(rq.Body)-300):])
		}
		t.Fatalf("exec -c on a huge session: exit %d stdout %q stderr %s\nkernel: %s", r.code, r.stdout, r.stderr, k.Logs())
	}
	if !strings.Contains(r.stderr, sid) {
		t.Fatalf("exec -c continued another session: %s", r.stderr)
	}
	o.checkNoKey(t)
}

// A live message over 1 MiB reaches subscribers cut to its first 1 MiB
// with messageTruncated and the whole size; foya exec reads the rest by
// paging, prints the whole text and does not exit early.
func TestLiveMessageOverOneMiBIsTruncated(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startTokenKernel(t)
	o := outputs{env: []string{"FOYA_TOKEN=" + k.token}}
	o.addFakeConnection(t, k.base, fake.BaseURL())

	// A first turn creates the session.
	fake.Enqueue(openaitest.TextStream("gpt-t", "ok"))
	r := o.mustRun(t, "", "exec", "--addr", k.base, "--model", "fake/gpt-t", "--approval-mode", "bypass", "hi")
	sid := regexp.MustCompile(`session (ses_\S+)`).FindStringSubmatch(r.stderr)
	if sid == nil {
		t.Fatalf("no session id: %s", r.stderr)
	}
	waitTitles(t, fake, 1)

	c := client.New(k.base, k.token)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sub, err := c.SessionEvents(ctx, sid[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	var parts []string
	for i := range 12 {
		parts = append(parts, fmt.Sprintf("[%02d]", i)+strings.Repeat("ü", 50_000)+"\n")
	}
	want := strings.Join(parts, "")
	fake.Enqueue(openaitest.TextStream("gpt-t", parts...))
	r = o.run(t, "", "exec", "--addr", k.base, "--session", sid[1], "write a lot")
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exec of a 1.2 MB reply: exit %d, %d bytes of stdout (want %d), stderr %s", r.code, len(r.stdout), len(want), r.stderr)
	}

	for {
		select {
		case ev, ok := <-sub.Events:
			if !ok {
				t.Fatalf("stream ended: %v", sub.Err())
			}
			e := ev.Data.SessionEvents
			if e.Type != "message_end" || e.Message == nil || e.Message.Role != client.RoleAssistant {
				continue
			}
			if !e.MessageTruncated || e.Message.TextBytes != len(want) || len(e.Message.Text) > core.LiveMessageTextBytes ||
				len(e.Message.Text) < core.LiveMessageTextBytes-3 || !strings.HasPrefix(want, e.Message.Text) {
				t.Fatalf("live message_end: truncated %v, textBytes %d, %d bytes of text", e.MessageTruncated, e.Message.TextBytes, len(e.Message.Text))
			}
			var p struct {
				MessageTruncated bool
				TextBytes        int
				Message          struct{ Text string }
			}
			if e.Payload == nil || json.Unmarshal(*e.Payload, &p) != nil || !p.MessageTruncated || p.TextBytes != len(want) || p.Message.Text != e.Message.Text {
				t.Fatalf("live payload not cut: %v %d", p.MessageTruncated, p.TextBytes)
			}
			if len(ev.Raw) > 3<<20 {
				t.Fatalf("live event %d bytes", len(ev.Raw))
			}
			// The events query has the whole message.
			var d struct {
				Events []struct {
					MessageTruncated bool
					Message          *struct{ TextBytes int }
				}
			}
			if err := k.query(t, `query($s: ID!, $a: Int) { events(sessionId: $s, afterSeq: $a, limit: 1) { messageTruncated message { textBytes } } }`,
				map[string]any{"s": sid[1], "a": *e.Seq - 1}, &d); err != nil || len(d.Events) != 1 || d.Events[0].MessageTruncated || d.Events[0].Message.TextBytes != len(want) {
				t.Fatalf("events query: %+v %v", d, err)
			}
			full, err := client.MessageText(ctx, c, sid[1], *e.Seq, e.Message.TextBytes)
			if err != nil || full != want {
				t.Fatalf("paged text: %d bytes, %v", len(full), err)
			}
			return
		case <-ctx.Done():
			t.Fatal("no message_end")
		}
	}
}

// foya acp loads (replays) a session too large for one response by paging
// it, and a live reply over 1 MiB reaches the client whole; the agent
// does not stop on either.
func TestACPHugeSessionAndLongReply(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	conn := o.addFakeConnection(t, k.addr, fake.BaseURL())
	doc := filepath.Join(t.TempDir(), "huge.jsonl")
	writeHugeDoc(t, doc, conn)
	proj := t.TempDir()
	r := o.mustRun(t, "", "sessions", "import", doc, "--addr", k.addr, "--project", proj, "--json")
	var imported struct{ Id string }
	if err := json.Unmarshal([]byte(r.stdout), &imported); err != nil || imported.Id == "" {
		t.Fatalf("import: %q %v", r.stdout, err)
	}

	p := startACP(t, "--addr", k.addr)
	p.call("initialize", map[string]any{"protocolVersion": 1}, nil)
	p.call("session/load", map[string]any{"sessionId": imported.Id, "cwd": proj, "mcpServers": []any{}}, nil)
	us := p.since(0)
	var replayed strings.Builder
	for i := range hugeCount {
		if i%2 == 0 {
			replayed.WriteString(hugeSessionText(i))
		}
	}
	if got := chunks(us, "user_message_chunk"); got != replayed.String() {
		t.Fatalf("replayed user chunks: %d bytes, want %d", len(got), replayed.Len())
	}

	var parts []string
	for i := range 12 {
		parts = append(parts, fmt.Sprintf("[%02d]", i)+strings.Repeat("ü", 50_000)+"\n")
	}
	want := strings.Join(parts, "")
	fake.Enqueue(openaitest.Completion("gpt-t", "Summary: 36 long messages.", "stop", 10, 5), openaitest.TextStream("gpt-t", parts...))
	mk := p.mark()
	var pr struct{ StopReason string }
	p.call("session/prompt", map[string]any{"sessionId": imported.Id, "prompt": []any{map[string]any{"type": "text", "text": "write a lot"}}}, &pr)
	if pr.StopReason != "end_turn" {
		t.Fatalf("stopReason %q; stderr %s", pr.StopReason, p.stderrText())
	}
	if got := chunks(p.since(mk), "agent_message_chunk"); got != want {
		t.Fatalf("agent chunks: %d bytes, want %d", len(got), len(want))
	}
	// The agent is still there.
	p.call("session/list", map[string]any{"cwd": proj}, nil)
}
