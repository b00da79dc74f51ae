package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// rawPost sends a POST to a kernel over its own TCP connection: the
// headers, then body written in the background while the answer is read, so
// an answer given before the body has all been sent (a refusal) is read
// whatever happens to the rest. contentLength < 0 sends the body chunked.
func rawPost(t *testing.T, addr string, body io.Reader, contentLength int64) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/graphql", body)
	req.Header.Set("Content-Type", "application/json")
	if tok := kernelBearer(addr); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	req.ContentLength = contentLength
	if contentLength < 0 {
		req.TransferEncoding = []string{"chunked"}
	}
	go func() { _ = req.Write(conn) }() // fails once the kernel closes: ignored
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Errorf("no answer: %v", err)
		return nil, nil
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, raw
}

// listBody is a GraphQL request whose variables are a list of size bytes
// (raw: a body built to test the kernel's limits).
type listBody struct {
	head, tail string
	size, n    int64
}

func newListBody(size int64) *listBody {
	return &listBody{head: `{"query":"query($ids: [Int!]) { __typename }","variables":{"ids":[`, tail: `1]}}`, size: size}
}

func (b *listBody) Read(p []byte) (int, error) {
	if b.n >= b.size {
		return 0, io.EOF
	}
	i := 0
	for ; i < len(p) && b.n < b.size; i++ {
		switch {
		case b.n < int64(len(b.head)):
			p[i] = b.head[b.n]
		case b.n >= b.size-int64(len(b.tail)):
			p[i] = b.tail[b.n-(b.size-int64(len(b.tail)))]
		default:
			p[i] = "1,"[(b.n-int64(len(b.head)))%2]
		}
		b.n++
	}
	return i, nil
}

func codeOf(raw []byte) (code, msg string) {
	var doc struct {
		Errors []struct {
			Message    string
			Extensions struct{ Code string }
		}
	}
	_ = json.Unmarshal(raw, &doc)
	if len(doc.Errors) == 0 {
		return "", ""
	}
	return doc.Errors[0].Extensions.Code, doc.Errors[0].Message
}

// eightBodies sends eight 8 MiB variable bodies in parallel (chunked, and
// then with a Content-Length), returning the answers' statuses and codes.
func eightBodies(t *testing.T, addr string) []string {
	const size = 8<<20 - 64 // under the 8 MiB body limit: only the variables budget refuses it
	var mu sync.Mutex
	var got []string
	for _, cl := range []int64{-1, size} {
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, raw := rawPost(t, addr, newListBody(size), cl)
				if resp == nil {
					return
				}
				code, msg := codeOf(raw)
				mu.Lock()
				got = append(got, fmt.Sprintf("%d %s %s", resp.StatusCode, code, msg))
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	return got
}

// Eight parallel bodies of 8 MiB of variables are refused before they are
// decoded: the kernel's peak RSS grows by less than 100 MB (it was 2.2 GB).
func TestVariablesBodiesRefusedWithoutMemoryGrowth(t *testing.T) {
	k := startKernel(t, t.TempDir())
	// Warm up: the first requests allocate the kernel's working set. The
	// document is raw, and the same as the baseline's below, whose older
	// kernel may lack fields the typed client selects.
	for range 3 {
		k.gql(t, `{ sessions { id } connections { id } }`, nil, nil)
	}
	pid := k.cmd.Process.Pid
	rss0, hwm0 := procMemory(t, pid)
	start := time.Now()
	got := eightBodies(t, k.addr)
	took := time.Since(start)
	rss1, hwm1 := procMemory(t, pid)
	t.Logf("kernel memory: VmRSS %d → %d KiB, VmHWM (peak) %d → %d KiB (+%d KiB); 16 requests in %s", rss0, rss1, hwm0, hwm1, hwm1-hwm0, took.Round(time.Millisecond))
	if len(got) != 16 {
		t.Fatalf("%d answers of 16: %v", len(got), got)
	}
	refusedByBudget := 0
	for i, g := range got {
		switch {
		case strings.HasPrefix(g, "413 BAD_INPUT ") && strings.Contains(g, "1 MiB, the limit of variables"):
			refusedByBudget++
		case i >= 8 && strings.HasPrefix(g, "429 RATE_LIMITED "): // with a Content-Length: expensive
		default:
			t.Errorf("answer %d: %s", i, g)
		}
	}
	if refusedByBudget < 8 {
		t.Errorf("%d answers refused by the variables budget, want at least the 8 chunked ones", refusedByBudget)
	}
	if grew := (hwm1 - hwm0) * 1024; grew >= 100_000_000 {
		t.Errorf("peak RSS grew by %d bytes, want < 100 MB", grew)
	}
	// The kernel still answers.
	k.listSessions(t, false)
}

// TestVariablesBodiesBaseline runs the same eight bodies against another
// foya binary (FOYA_BASELINE_BIN, e.g. one built from before the variables
// budget) and logs its memory; it asserts nothing.
func TestVariablesBodiesBaseline(t *testing.T) {
	bin := os.Getenv("FOYA_BASELINE_BIN")
	if bin == "" {
		t.Skip("FOYA_BASELINE_BIN not set")
	}
	old := foyaBin
	foyaBin = bin
	k := startKernel(t, t.TempDir())
	foyaBin = old
	// Raw: an older kernel answers this document (see above).
	for range 3 {
		k.gql(t, `{ sessions { id } connections { id } }`, nil, nil)
	}
	rss0, hwm0 := procMemory(t, k.cmd.Process.Pid)
	start := time.Now()
	got := eightBodies(t, k.addr)
	rss1, hwm1 := procMemory(t, k.cmd.Process.Pid)
	statuses := map[string]int{}
	for _, g := range got {
		statuses[strings.SplitN(g, " ", 2)[0]]++
	}
	t.Logf("baseline: answers %v in %s; VmRSS %d → %d KiB, VmHWM %d → %d KiB (+%d KiB)", statuses, time.Since(start).Round(time.Millisecond), rss0, rss1, hwm0, hwm1, hwm1-hwm0)
}

// slowPost starts a POST whose body never finishes arriving: a request in
// flight until conn is closed.
func slowPost(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"query\":", addr, kernelBearer(addr))
	return conn
}

// At most 16 requests of one peer are in flight: with 16 slow requests
// open, the 17th gets 429 RATE_LIMITED with Retry-After; one slow request
// finishing makes room at once.
func TestInFlightPerPeerLimit(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	post := func() (*http.Response, string) {
		resp, err := http.Post(k.url()+"/graphql", "application/json", strings.NewReader(`{"query":"{ __typename }"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		code, _ := codeOf(raw)
		return resp, code + " " + string(raw)
	}
	var slow []net.Conn
	for range 15 {
		slow = append(slow, slowPost(t, k.addr))
	}
	time.Sleep(300 * time.Millisecond) // the kernel has read their headers
	if resp, body := post(); resp.StatusCode != http.StatusOK {
		t.Fatalf("the 16th request in flight: HTTP %d %s", resp.StatusCode, body)
	}
	slow = append(slow, slowPost(t, k.addr))
	time.Sleep(300 * time.Millisecond)
	resp, body := post()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.HasPrefix(body, "RATE_LIMITED ") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the 17th request in flight: HTTP %d, Retry-After %q, %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	t.Logf("the 17th: HTTP %d, Retry-After %s, %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	// One slow request completes: its slot is free again.
	fmt.Fprint(slow[0], strings.Repeat(" ", 100-len(`{"query":`)))
	r, err := http.ReadResponse(bufio.NewReader(slow[0]), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if resp, body := post(); resp.StatusCode != http.StatusOK {
		t.Fatalf("after one finished: HTTP %d %s", resp.StatusCode, body)
	}
}

// wsMsg is a graphql-transport-ws message.
type wsMsg struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// A burst of 101 subscribes on one WebSocket: exactly the 101st is refused;
// completing one frees its slot for the next subscribe at once.
func TestSubscriptionBurstExact(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws://"+k.addr+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	send := func(m wsMsg) {
		b, _ := json.Marshal(m)
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	msgs := make(chan wsMsg, 1000)
	go func() {
		defer close(msgs)
		for {
			_, b, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var m wsMsg
			_ = json.Unmarshal(b, &m)
			msgs <- m
		}
	}()
	next := func(d time.Duration) (wsMsg, bool) {
		select {
		case m, ok := <-msgs:
			return m, ok
		case <-time.After(d):
			return wsMsg{}, false
		}
	}
	initPayload, _ := json.Marshal(map[string]string{"authorization": "Bearer " + k.token})
	send(wsMsg{Type: "connection_init", Payload: initPayload})
	if m, _ := next(10 * time.Second); m.Type != "connection_ack" {
		t.Fatalf("want connection_ack, got %+v", m)
	}
	// Raw: subscribe messages written by hand, to count them past the cap.
	sub := json.RawMessage(`{"query":"subscription { kernelEvents { type } }"}`)
	// The burst: written back to back, nothing read in between.
	for i := 1; i <= 101; i++ {
		send(wsMsg{ID: fmt.Sprint(i), Type: "subscribe", Payload: sub})
	}
	// expectRefused waits for the refusal of id and makes sure no other
	// subscription got an answer meanwhile (they are live: kernelEvents
	// sends nothing while the kernel is idle).
	expectRefused := func(id string) {
		t.Helper()
		var gotErr, gotComplete bool
		deadline := time.Now().Add(15 * time.Second)
		for !(gotErr && gotComplete) {
			m, ok := next(time.Until(deadline))
			if !ok {
				t.Fatalf("no refusal of subscription %s (error %v, complete %v)", id, gotErr, gotComplete)
			}
			if m.Type == "complete" && m.ID == "7" {
				continue // gqlgen answers a client's complete with its own
			}
			if m.ID != id {
				t.Fatalf("subscription %s answered %s %s, want only the refusal of %s", m.ID, m.Type, m.Payload, id)
			}
			switch m.Type {
			case "error": // graphql-transport-ws: refused before it ran, no complete follows
				var errs []struct {
					Message    string
					Extensions struct{ Code string }
				}
				_ = json.Unmarshal(m.Payload, &errs)
				if len(errs) != 1 || errs[0].Extensions.Code != "BAD_INPUT" || !strings.Contains(errs[0].Message, "already runs 100 subscriptions") {
					t.Fatalf("refusal of %s: %s", id, m.Payload)
				}
				gotErr, gotComplete = true, true
			case "next":
				var p struct {
					Errors []struct {
						Message    string
						Extensions struct{ Code string }
					}
				}
				_ = json.Unmarshal(m.Payload, &p)
				if len(p.Errors) != 1 || p.Errors[0].Extensions.Code != "BAD_INPUT" || !strings.Contains(p.Errors[0].Message, "already runs 100 subscriptions") {
					t.Fatalf("refusal of %s: %s", id, m.Payload)
				}
				gotErr = true
			case "complete":
				gotComplete = true
			default:
				t.Fatalf("subscription %s: unexpected %s %s", id, m.Type, m.Payload)
			}
		}
	}
	expectRefused("101")
	if m, ok := next(time.Second); ok {
		t.Fatalf("after the refusal: %+v (the other 100 must be live and quiet)", m)
	}
	// Complete one; the next subscribe is taken at once, the one after
	// that refused again.
	send(wsMsg{ID: "7", Type: "complete"})
	send(wsMsg{ID: "102", Type: "subscribe", Payload: sub})
	send(wsMsg{ID: "103", Type: "subscribe", Payload: sub})
	expectRefused("103")
	if m, ok := next(time.Second); ok && (m.Type != "complete" || m.ID != "7") {
		t.Fatalf("after the second refusal: %+v", m)
	}
}

// kernelBearer is the token of the kernel at addr that startKernel started
// ("" when it needs none).
func kernelBearer(addr string) string {
	kernelTokens.mu.Lock()
	defer kernelTokens.mu.Unlock()
	return kernelTokens.tokens[addr]
}
