package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// hostileModel is an OpenAI-compatible endpoint (Chat Completions over SSE,
// real HTTP) that answers the next request with a scripted reply written
// as it goes, as an attacker's model server would: a reply is never held
// whole in memory, so it can be 100 MB or endless. Title requests and
// requests with nothing scripted get a short answer.
type hostileModel struct {
	*httptest.Server
	mu     sync.Mutex
	script []func(w *sseWriter)
	sent   atomic.Int64 // bytes written of the last scripted reply
}

func newHostileModel(t *testing.T) *hostileModel {
	h := &hostileModel{}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Close)
	return h
}

func (h *hostileModel) baseURL() string { return h.URL + "/v1" }

func (h *hostileModel) then(reply func(w *sseWriter)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.script = append(h.script, reply)
}

// sseWriter writes chat.completion.chunk events; write reports false once
// the client went away.
type sseWriter struct {
	w    http.ResponseWriter
	r    *http.Request
	sent *atomic.Int64
}

func (s *sseWriter) write(data string) bool {
	if s.r.Context().Err() != nil {
		return false
	}
	n, err := io.WriteString(s.w, "data: "+data+"\n\n")
	if s.sent != nil {
		s.sent.Add(int64(n))
	}
	if err != nil {
		return false
	}
	s.w.(http.Flusher).Flush()
	return true
}

func (s *sseWriter) chunk(delta map[string]any, finish string) bool {
	return s.write(openaitest.Chunk("gpt-t", delta, finish))
}

func (s *sseWriter) done() {
	s.write(openaitest.UsageChunk("gpt-t", 10, 5, 0))
	s.write("[DONE]")
}

func (h *hostileModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not here"}}`, http.StatusNotFound)
		return
	}
	if !strings.Contains(string(body), `"stream":true`) {
		// A title request (non-streamed): a short chat.completion.
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","model":"gpt-t","choices":[{"index":0,"message":{"role":"assistant","content":"Hostile"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
		return
	}
	var reply func(*sseWriter)
	if !strings.Contains(string(body), "Write a title") {
		h.mu.Lock()
		if len(h.script) > 0 {
			reply, h.script = h.script[0], h.script[1:]
		}
		h.mu.Unlock()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, r: r}
	if reply == nil {
		s.chunk(map[string]any{"role": "assistant", "content": "ok"}, "")
		s.chunk(map[string]any{}, "stop")
		s.done()
		return
	}
	h.sent.Store(0)
	s.sent = &h.sent
	reply(s)
}

const mib = 1 << 20

// hugeToolArgs streams one tool call whose arguments are total bytes, in
// 1 MiB deltas.
func hugeToolArgs(total int) func(*sseWriter) {
	return func(s *sseWriter) {
		part := openaitest.Chunk("gpt-t", map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": strings.Repeat("a", mib)}}}}, "")
		if !s.chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": "call_huge", "type": "function",
			"function": map[string]any{"name": "write", "arguments": `{"path":"huge.txt","content":"`}}}}, "") {
			return
		}
		for range total / mib {
			if !s.write(part) {
				return
			}
		}
		s.chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": `"}`}}}}, "")
		s.chunk(map[string]any{}, "tool_calls")
		s.done()
	}
}

// hugeText streams total bytes of text in 1 MiB deltas.
func hugeText(total int) func(*sseWriter) {
	return func(s *sseWriter) {
		part := openaitest.Chunk("gpt-t", map[string]any{"content": strings.Repeat("t", mib)}, "")
		s.chunk(map[string]any{"role": "assistant"}, "")
		for range total / mib {
			if !s.write(part) {
				return
			}
		}
		s.chunk(map[string]any{}, "stop")
		s.done()
	}
}

// endless streams 1 MiB deltas, reasoning and text in turn, until the
// client goes away (or, when limit > 0, until limit bytes: an old kernel
// never hangs up).
func endless(limit int) func(*sseWriter) {
	return func(s *sseWriter) {
		parts := []string{
			openaitest.Chunk("gpt-t", map[string]any{"reasoning_content": strings.Repeat("r", mib)}, ""),
			openaitest.Chunk("gpt-t", map[string]any{"content": strings.Repeat("e", mib)}, ""),
		}
		s.chunk(map[string]any{"role": "assistant"}, "")
		for i := 0; limit == 0 || i < limit/mib; i++ {
			if !s.write(parts[i%2]) {
				return
			}
		}
		s.chunk(map[string]any{}, "stop")
		s.done()
	}
}

// dbBytes is the size of the kernel's SQLite database file and of its WAL
// file (which SQLite reuses after each checkpoint: its size follows the
// largest transaction, not the data kept).
func dbBytes(t *testing.T, dataDir string) (db, wal int64) {
	if st, err := os.Stat(filepath.Join(dataDir, "foya.db")); err == nil {
		db = st.Size()
	}
	if st, err := os.Stat(filepath.Join(dataDir, "foya.db-wal")); err == nil {
		wal = st.Size()
	}
	return db, wal
}

// hostileResult is what one hostile reply did to a kernel.
type hostileResult struct {
	hwmBefore, hwmAfter int64 // KiB
	dbBefore, dbAfter   int64 // bytes of foya.db
	walBefore, walAfter int64 // bytes of foya.db-wal
	sent                int64 // bytes the model server wrote before the kernel hung up
	exec                cliResult
	took                time.Duration
	sid                 string
}

// runHostile starts a kernel (with extra serve flags), runs one short turn
// through `foya exec` in a project, then the hostile reply as the next
// turn of that session, measuring the kernel's peak RSS and database.
func runHostile(t *testing.T, o *outputs, reply func(*sseWriter), extra ...string) (*kernelProc, string, string, hostileResult) {
	t.Helper()
	model := newHostileModel(t)
	data := t.TempDir()
	k := startKernel(t, data, extra...)
	o.addFakeConnection(t, k.addr, model.baseURL())
	project := t.TempDir()
	o.mustRun(t, "", "exec", "--addr", k.addr, "--project", project, "--approval-mode", "bypass", "hello")
	time.Sleep(300 * time.Millisecond) // the title request
	var res hostileResult
	_, res.hwmBefore = procMemory(t, k.cmd.Process.Pid)
	res.dbBefore, res.walBefore = dbBytes(t, data)
	model.then(reply)
	start := time.Now()
	res.exec = runExec(t, 5*time.Minute, "exec", "--addr", k.addr, "--project", project, "-c", "go on")
	var sessions struct {
		Sessions []struct{ ID, Phase string }
	}
	// The turn ends (an old kernel's goes on after exec gave up).
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		decodeAs(t, k.listSessions(t, false), &sessions)
		if len(sessions.Sessions) != 1 {
			t.Fatalf("sessions %+v", sessions)
		}
		if sessions.Sessions[0].Phase == "IDLE" || time.Now().After(deadline) {
			break
		}
	}
	res.took = time.Since(start)
	_, res.hwmAfter = procMemory(t, k.cmd.Process.Pid)
	res.dbAfter, res.walAfter = dbBytes(t, data)
	res.sent = model.sent.Load()
	res.sid = sessions.Sessions[0].ID
	t.Logf("kernel peak RSS %d → %d KiB (+%d KiB), database %d → %d bytes (+%d), WAL %d → %d bytes, the model server wrote %d bytes, exec exit %d in %s",
		res.hwmBefore, res.hwmAfter, res.hwmAfter-res.hwmBefore, res.dbBefore, res.dbAfter, res.dbAfter-res.dbBefore, res.walBefore, res.walAfter, res.sent, res.exec.code, res.took.Round(time.Millisecond))
	return k, project, data, res
}

type hostileMsg struct {
	Role      string
	Text      string
	Reasoning *string
	IsError   bool
	Truncated bool
	ToolCalls []struct{ Name string }
}

// A model server streams a 50 MB tool argument, a 100 MB text and an
// endless reply (1 MiB deltas) to a real `foya serve`: each turn ends with
// its coded reason, the kernel's peak RSS grows by less than 100 MB and its
// database by less than 10 MB, and the session can still be read, exported
// and continued with `foya exec -c`.
func TestHostileRepliesBounded(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("streams hundreds of MB")
	}
	cases := []struct {
		name   string
		reply  func(*sseWriter)
		failed bool   // the turn ends with OUTPUT_LIMIT (else it completes)
		flag   string // the cap named in the reason
		serve  []string
	}{
		{"50 MB tool argument", hugeToolArgs(50 * mib), false, "--max-tool-call-args", nil},
		// With the default turn budget (1,000,000 tokens, counted at four
		// bytes per token while streaming) a text reply reaches the budget
		// just before the 4 MiB text cap; a larger budget shows the text cap.
		{"100 MB text", hugeText(100 * mib), true, "--max-reply-text", []string{"--max-turn-output-tokens", "2000000"}},
		{"endless reply", endless(0), true, "--max-turn-output-tokens", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var o outputs
			k, project, _, res := runHostile(t, &o, tc.reply, tc.serve...)
			if grew := res.hwmAfter - res.hwmBefore; grew >= 100*1000 {
				t.Errorf("peak RSS grew by %d KiB", grew)
			}
			if grew := res.dbAfter - res.dbBefore; grew >= 10*1000*1000 {
				t.Errorf("database grew by %d bytes", grew)
			}
			if res.walAfter >= 10*1000*1000 {
				t.Errorf("WAL file of %d bytes", res.walAfter)
			}
			if res.sent >= 40*mib {
				t.Errorf("the model server wrote %d bytes: the kernel did not close the stream", res.sent)
			}
			// The turn's end, with its code.
			evs := k.eventLog(t, res.sid)
			var end struct{ Status, Reason, Code string }
			for _, e := range evs.Events {
				if e.Type == "turn_finished" {
					json.Unmarshal(e.Payload, &end)
				}
			}
			if tc.failed {
				if res.exec.code == 0 || end.Status != "failed" || end.Code != "OUTPUT_LIMIT" || !strings.Contains(end.Reason, tc.flag) || !strings.Contains(res.exec.stderr, "output_limit") {
					t.Fatalf("turn %+v, exec exit %d: %.500s", end, res.exec.code, res.exec.stderr)
				}
			} else if res.exec.code != 0 || end.Status != "completed" || end.Code != "" {
				t.Fatalf("turn %+v, exec exit %d: %.500s", end, res.exec.code, res.exec.stderr)
			}
			// session{messages} works and shows what was kept, marked.
			var s struct {
				Session struct{ Messages []hostileMsg }
			}
			decodeAs(t, k.sessionDetail(t, res.sid), &s)
			msgs := s.Session.Messages
			var cut *hostileMsg
			for i := range msgs {
				if msgs[i].Truncated {
					cut = &msgs[i]
				}
			}
			if cut == nil {
				t.Fatalf("no truncated message among %d", len(msgs))
			}
			switch tc.name {
			case "50 MB tool argument":
				last := msgs[len(msgs)-1]
				refusal := msgs[len(msgs)-2]
				if len(cut.ToolCalls) != 1 || !refusal.IsError || !strings.Contains(refusal.Text, "1 MiB") || last.Text != "ok" {
					t.Fatalf("messages %+v", msgs[len(msgs)-3:])
				}
			case "100 MB text":
				if len(cut.Text) != 4*mib {
					t.Fatalf("kept %d bytes of text", len(cut.Text))
				}
			default:
				if n := len(cut.Text) + len(derefString(cut.Reasoning)); n != 4_000_000 {
					t.Fatalf("kept %d bytes", n)
				}
			}
			// exportSession works.
			ex, err := client.ExportSession(context.Background(), k.client(), res.sid)
			if err != nil {
				t.Fatalf("exportSession: %v", err)
			}
			if !strings.Contains(ex.ExportSession, "foya.session") {
				t.Fatalf("export %.200s", ex.ExportSession)
			}
			// foya exec -c continues the session.
			r := o.mustRun(t, "", "exec", "--addr", k.addr, "--project", project, "-c", "are you there?")
			if !strings.Contains(r.stdout, "ok") {
				t.Fatalf("exec -c: %q %q", r.stdout, r.stderr)
			}
			after := k.listSessions(t, false)
			if len(after.Sessions) != 1 {
				t.Fatalf("exec -c made a new session: %+v", after)
			}
		})
	}
}

// TestHostileRepliesBaseline runs the same replies against another foya
// binary (FOYA_BASELINE_BIN, e.g. one built before the caps) and only logs
// what they cost it: the "before" figures of RELIABILITY.md. The endless
// reply stops after 200 MB there (an old kernel never hangs up).
func TestHostileRepliesBaseline(t *testing.T) {
	bin := os.Getenv("FOYA_BASELINE_BIN")
	if bin == "" {
		t.Skip("set FOYA_BASELINE_BIN to measure another binary")
	}
	saved := foyaBin
	foyaBin = bin
	defer func() { foyaBin = saved }()
	for _, tc := range []struct {
		name  string
		reply func(*sseWriter)
	}{
		{"50 MB tool argument", hugeToolArgs(50 * mib)},
		{"100 MB text", hugeText(100 * mib)},
		{"endless reply (stopped at 200 MB)", endless(200 * mib)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o outputs
			_, _, _, res := runHostile(t, &o, tc.reply)
			fmt.Fprintf(os.Stderr, "%s: peak RSS %d → %d KiB, database +%d bytes, WAL %d bytes\n", tc.name, res.hwmBefore, res.hwmAfter, res.dbAfter-res.dbBefore, res.walAfter)
		})
	}
}

// runExec runs a foya command with a deadline, keeping at most 1 MiB of
// its stdout and stderr each (an old kernel prints hundreds of MB).
func runExec(t *testing.T, limit time.Duration, args ...string) cliResult {
	t.Helper()
	cmd := foyaCmd(t, "", args...)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Logf("foya %v did not finish in %s (killed)", args, limit)
	}
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// capped keeps the first 1 MiB and the last 64 KiB written to it.
type capped struct {
	mu         sync.Mutex
	head, tail []byte
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := mib - len(c.head); room > 0 {
		c.head = append(c.head, p[:min(room, len(p))]...)
	}
	c.tail = append(c.tail, p...)
	if over := len(c.tail) - 64<<10; over > 0 {
		c.tail = append(c.tail[:0:0], c.tail[over:]...)
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.head) + "\n…\n" + string(c.tail)
}

func derefString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
