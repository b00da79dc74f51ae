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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// procMemory reads VmRSS and VmHWM (peak RSS) of a process, in KiB.
func procMemory(t *testing.T, pid int) (rss, hwm int64) {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = n
		case "VmHWM:":
			hwm = n
		}
	}
	return rss, hwm
}

// rawReply is one HTTP answer of a kernel process.
type rawReply struct {
	status int
	body   []byte
	data   json.RawMessage
	errors []struct {
		Message    string
		Extensions struct{ Code string }
	}
}

// target is a kernel process as a client reaches it: its base URL and the
// bearer token it wants ("" for none).
type target struct{ base, token string }

func (tg target) postBody(t *testing.T, body []byte) rawReply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, tg.base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if tg.token != "" {
		req.Header.Set("Authorization", "Bearer "+tg.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := rawReply{status: resp.StatusCode, body: raw}
	var doc struct {
		Data   json.RawMessage
		Errors []struct {
			Message    string
			Extensions struct{ Code string }
		}
	}
	json.Unmarshal(raw, &doc)
	r.errors, r.data = doc.Errors, doc.Data
	return r
}

func (tg target) postQuery(t *testing.T, query string, vars map[string]any) rawReply {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return tg.postBody(t, body)
}

func aliasQuery(n int, field string) string {
	var b strings.Builder
	b.WriteString("query($s: ID!) {")
	for i := range n {
		fmt.Fprintf(&b, " a%d: %s", i, field)
	}
	b.WriteString(" }")
	return b.String()
}

// bombResult is what the amplification requests did to a kernel.
type bombResult struct {
	rssBefore, hwmBefore, rssAfter, hwmAfter int64 // KiB
	// hwmUnderLimit is the peak after the request under the cost limit.
	hwmUnderLimit int64
	replies       map[string]rawReply
	took          map[string]time.Duration
}

// runBombs gives a real kernel a session with about 1 MB of messages, then
// sends the alias bomb (666 × session{messages{text}}), 1,000 aliases of
// events(limit: 5000) and a 9 MiB body, measuring the process's memory.
func runBombs(t *testing.T, k *kernelProc, tg target) bombResult {
	t.Helper()
	fake := openaitest.New(t)
	ctx, c := context.Background(), client.New(tg.base, tg.token)
	conn, err := client.CreateConnection(ctx, c, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(fake.BaseURL()), ApiKey: ptr(""), Models: []client.ModelInput{{Id: "gpt-t",
		// A window the four 240,000-byte messages fit in: no automatic
		// compaction takes a reply meant for a turn (the turn would then
		// find none and retry for 14 s).
		Capabilities: &client.CapabilitiesInput{ContextWindow: ptr(10_000_000)}}}})
	if err != nil {
		t.Fatalf("createConnection: %v", err)
	}
	sess, err := client.CreateSession(ctx, c, client.CreateSessionInput{ConnectionId: &conn.CreateConnection.Id, Title: ptr("bomb target")})
	if err != nil {
		t.Fatalf("createSession: %v", err)
	}
	sid := sess.CreateSession.Id
	big := strings.Repeat("payload ", 30_000) // 240,000 bytes
	for i := range 4 {
		fake.Enqueue(openaitest.TextStream("gpt-t", fmt.Sprintf("reply %d", i)))
		if _, err := client.SendMessage(ctx, c, sid, &big); err != nil {
			t.Fatalf("sendMessage: %v", err)
		}
		for {
			var s struct{ Session struct{ Phase string } }
			info, err := client.SessionInfo(ctx, c, sid)
			if err != nil {
				t.Fatalf("session: %v", err)
			}
			decodeAs(t, info, &s)
			if s.Session.Phase == "IDLE" {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	pid := k.cmd.Process.Pid
	res := bombResult{replies: map[string]rawReply{}, took: map[string]time.Duration{}}
	res.rssBefore, res.hwmBefore = procMemory(t, pid)
	vars := map[string]any{"s": sid}
	for _, c := range []struct{ name, query string }{
		{"alias bomb", aliasQuery(666, "session(id: $s) { messages { text } }")},
		{"events bomb", aliasQuery(1000, "events(sessionId: $s, limit: 5000) { seq type payload }")},
	} {
		start := time.Now()
		res.replies[c.name] = tg.postQuery(t, c.query, vars)
		res.took[c.name] = time.Since(start)
	}
	start := time.Now()
	res.replies["9 MiB body"] = tg.postBody(t, []byte(`{"query":"{ __typename }","variables":{"pad":"`+strings.Repeat("a", 9<<20)+`"}}`))
	res.took["9 MiB body"] = time.Since(start)
	res.rssAfter, res.hwmAfter = procMemory(t, pid)
	// Under the cost limit (150 × 202 = 30,300), the response (about
	// 150 × 960 KB) is what the response-size cap stops.
	start = time.Now()
	res.replies["150 aliases"] = tg.postQuery(t, aliasQuery(150, "session(id: $s) { messages { text } }"), vars)
	res.took["150 aliases"] = time.Since(start)
	_, res.hwmUnderLimit = procMemory(t, pid)
	for name, r := range res.replies {
		t.Logf("%s: HTTP %d, %d response bytes, %s", name, r.status, len(r.body), res.took[name].Round(time.Millisecond))
	}
	t.Logf("kernel memory: VmRSS %d → %d KiB, VmHWM (peak) %d → %d KiB; peak after the 150 aliases %d KiB", res.rssBefore, res.rssAfter, res.hwmBefore, res.hwmAfter, res.hwmUnderLimit)
	return res
}

// The amplification requests of issue 12 against a real `foya serve` bound
// to 0.0.0.0:0 (so with its token): each is refused before execution with a
// coded error, and the kernel's peak memory does not move.
func TestAmplificationRefusedWithoutMemoryGrowth(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	k := startKernel(t, data, "--addr", "0.0.0.0:0")
	raw, err := os.ReadFile(filepath.Join(data, "auth-token"))
	if err != nil {
		t.Fatal(err)
	}
	tg := target{base: "http://127.0.0.1:" + portOf(t, k.addr), token: strings.TrimSpace(string(raw))}
	// Without the token the bounds are not even reached.
	if r := (target{base: tg.base}).postQuery(t, aliasQuery(666, "session(id: $s) { id }"), map[string]any{"s": "x"}); r.status != http.StatusUnauthorized {
		t.Fatalf("no token: HTTP %d", r.status)
	}
	res := runBombs(t, k, tg)
	if r := res.replies["150 aliases"]; len(r.errors) != 1 || !strings.Contains(r.errors[0].Message, "16 MiB") {
		t.Errorf("150 aliases: %.300s", r.body)
	}
	for name, r := range res.replies {
		if len(r.errors) == 0 || r.errors[0].Extensions.Code != "BAD_INPUT" {
			t.Errorf("%s: HTTP %d %.300s", name, r.status, r.body)
		}
		if len(r.body) > 4096 {
			t.Errorf("%s: a %d-byte answer", name, len(r.body))
		}
	}
	if r := res.replies["9 MiB body"]; r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("9 MiB body: HTTP %d", r.status)
	}
	for _, name := range []string{"alias bomb", "events bomb"} {
		if msg := res.replies[name].errors; len(msg) == 0 || !strings.Contains(msg[0].Message, "cost") {
			t.Errorf("%s was not refused for its cost: %+v", name, msg)
		}
	}
	// Unchanged: the peak grows by less than 16 MiB (the 9 MiB body is not
	// read past its Content-Length check; executing the alias bomb would
	// take hundreds of MiB).
	if grew := res.hwmAfter - res.hwmBefore; grew > 16<<10 {
		t.Errorf("peak RSS grew by %d KiB", grew)
	}
}

// TestAmplificationBaseline runs the same requests against another foya
// binary (FOYA_BASELINE_BIN, e.g. one built from an older commit) and only
// logs what they cost it: the "before" figures of BENCHMARKS.md.
func TestAmplificationBaseline(t *testing.T) {
	bin := os.Getenv("FOYA_BASELINE_BIN")
	if bin == "" {
		t.Skip("set FOYA_BASELINE_BIN to measure another binary")
	}
	saved := foyaBin
	foyaBin = bin
	defer func() { foyaBin = saved }()
	k := startKernel(t, t.TempDir())
	runBombs(t, k, target{base: k.url()})
}

func TestExecNeutralizesTerminalEscapes(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	evil := "Hi \x1b]0;pwned\x07\x1b[2J\u009b31m\u202eevil\r done"
	fake.Enqueue(openaitest.TextStream("gpt-t", evil[:5], evil[5:]))
	r := o.mustRun(t, "", "exec", "--addr", k.addr, "--approval-mode", "bypass", "go")
	if want := "Hi ^[]0;pwned^G^[[2J<U+009B>31m<U+202E>evil done\n"; r.stdout != want {
		t.Fatalf("stdout %q, want %q", r.stdout, want)
	}
	if strings.ContainsAny(r.stdout+r.stderr, "\x1b\x07\u009b\u202e\r") {
		t.Fatalf("a control character reached the terminal: %q %q", r.stdout, r.stderr)
	}
	waitTitles(t, fake, 1)
	// sessions show prints the stored text neutralized too.
	sid := strings.Fields(r.stderr[strings.Index(r.stderr, "session ses_")+len("session "):])[0]
	show := o.mustRun(t, "", "sessions", "show", sid, "--addr", k.addr)
	if !strings.Contains(show.stdout, "^[]0;pwned^G") || strings.ContainsAny(show.stdout, "\x1b\x07") {
		t.Fatalf("sessions show: %q", show.stdout)
	}
	// --json passes the text through as JSON (escaped by the encoding).
	fake.Enqueue(openaitest.TextStream("gpt-t", evil))
	r = o.mustRun(t, "", "exec", "--json", "--addr", k.addr, "--session", sid, "again")
	if !strings.Contains(r.stdout, `\u001b]0;pwned`) {
		t.Fatalf("--json output lost the text: %s", r.stdout)
	}
}
