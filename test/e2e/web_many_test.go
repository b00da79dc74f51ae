package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
)

// createManySessions creates n top-level sessions titled "Session <i>" in
// order, every other one (the even ones) in a project, with batches of
// aliased createSession mutations, and returns the project's path.
func createManySessions(tb testing.TB, k *kernelProc, n int) string {
	tb.Helper()
	k.createConnection(tb, client.ConnectionInput{Name: ptr("local"), BaseUrl: ptr("http://127.0.0.1:9/v1"), Models: []client.ModelInput{{Id: "gpt-t"}}})
	p := k.createProject(tb, tb.TempDir())
	const batch = 50
	for start := 0; start < n; start += batch {
		var q strings.Builder
		q.WriteString("mutation {")
		for i := start; i < min(start+batch, n); i++ {
			project := ""
			if i%2 == 0 {
				project = ", projectId: " + strconv.Quote(p.Id)
			}
			fmt.Fprintf(&q, " s%d: createSession(input: {title: \"Session %d\"%s}) { id }", i, i, project)
		}
		q.WriteString(" }")
		k.gql(tb, q.String(), nil, nil)
	}
	return p.Path
}

// TestWebClientManySessions: 2,000 sessions on a kernel whose responses
// are at most 64 KiB (the least serve --max-response takes), so that no response can carry their list. The
// unpaged list is refused with the hint to page it; `foya sessions ls`
// (table and --json) lists every session, each once; and in Foya web
// (test/web/many.mjs, MODE=check) the sidebar reads them in pages that fit and counts every one in its
// group but draws a bounded number, in order; Show more draws the next
// ones; kernel events rename a drawn session; a session opened from the
// address that was not drawn is drawn and marked current. ACP's
// session/list pages them with nextCursor.
func TestWebClientManySessions(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the headless Chromium web client check")
	}
	webCheckSetup(t)
	k := startKernel(t, t.TempDir(), "--max-response", "64KiB")
	const n = 2000
	proj := createManySessions(t, k, n)

	tk := tokenKernel{k, "127.0.0.1:" + portOf(t, k.addr), k.token}
	if e := tk.query(t, "{ sessions { id title updatedAt project { id name path } } }", nil, nil); e == nil || e.Code != "BAD_INPUT" ||
		!strings.Contains(e.Message, "larger than 64 KiB") || !strings.Contains(e.Message, "sessions: page with first/after") {
		t.Fatalf("the unpaged list of %d sessions under a 64 KiB limit: %+v", n, e)
	}

	var o outputs
	cli := func(args ...string) string { return o.mustRun(t, "", append(args, "--addr", k.addr)...).stdout }
	lines := strings.Split(strings.TrimSpace(cli("sessions", "ls")), "\n")
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		seen[strings.Fields(l)[0]] = true
	}
	if len(lines) != n+1 || len(seen) != n {
		t.Fatalf("foya sessions ls: %d lines, %d sessions; want a header and %d", len(lines), len(seen), n)
	}
	var listed []struct{ ID string }
	if err := json.Unmarshal([]byte(cli("sessions", "ls", "--json")), &listed); err != nil || len(listed) != n {
		t.Fatalf("foya sessions ls --json: %d sessions (%v), want %d", len(listed), err, n)
	}

	// ACP's session/list: the project's 1,000 sessions in pages of 100
	// joined by nextCursor, each once; a cursor naming no session is
	// invalid params.
	p := startACP(t, "--addr", k.addr)
	p.call("initialize", map[string]any{"protocolVersion": 1}, nil)
	inACP := map[string]bool{}
	pages := 0
	for cursor := ""; ; {
		var ls struct {
			Sessions   []struct{ SessionID, Cwd string }
			NextCursor string
		}
		params := map[string]any{"cwd": proj}
		if cursor != "" {
			params["cursor"] = cursor
		}
		p.call("session/list", params, &ls)
		pages++
		for _, s := range ls.Sessions {
			if inACP[s.SessionID] || s.Cwd != proj {
				t.Fatalf("session/list page %d: %s listed twice or in %s", pages, s.SessionID, s.Cwd)
			}
			inACP[s.SessionID] = true
		}
		if len(ls.Sessions) > 100 || ls.NextCursor == "" {
			if ls.NextCursor != "" || len(inACP) != n/2 {
				t.Fatalf("session/list: %d sessions in %d pages (last %d, next %q), want %d", len(inACP), pages, len(ls.Sessions), ls.NextCursor, n/2)
			}
			break
		}
		cursor = ls.NextCursor
	}
	if pages < n/2/100 {
		t.Fatalf("session/list: %d pages", pages)
	}
	if m := p.await(p.start("session/list", map[string]any{"cursor": "ses_nosuch"}), "bad cursor"); m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "list again without a cursor") {
		t.Fatalf("session/list with a cursor naming no session: %+v", m.Error)
	}

	t.Log(runWebScript(t, 3*time.Minute, "many.mjs", k, "MODE=check", "MANY="+strconv.Itoa(n)))
}

// BenchmarkWebSidebarMany opens Foya web on a kernel with MANY sessions
// (default 10,000) and reports the main-thread CPU of the page to load with
// the sidebar drawn (load-cpu-ms) and to take one kernel event that renames
// a session (event-cpu-ms), medians of four warm loads per iteration:
//
//	go test -run '^$' -bench WebSidebarMany -benchtime 1x ./test/e2e
func BenchmarkWebSidebarMany(b *testing.B) {
	webCheckSetup(b)
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("MANY")); err == nil && v > 0 {
		n = v
	}
	k := startKernel(b, b.TempDir())
	createManySessions(b, k, n)
	b.ResetTimer()
	for range b.N {
		out := runWebScript(b, 5*time.Minute, "many.mjs", k, "MODE=bench", "MANY="+strconv.Itoa(n))
		b.Log(out)
		for _, m := range []string{"load-cpu-ms", "event-cpu-ms"} {
			i := strings.Index(out, m+": ")
			if i < 0 {
				b.Fatalf("no %s in %s", m, out)
			}
			var v float64
			if _, err := fmt.Sscanf(out[i+len(m)+2:], "%g", &v); err != nil {
				b.Fatalf("%s: %v", m, err)
			}
			b.ReportMetric(v, m)
		}
	}
}
