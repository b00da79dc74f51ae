package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
)

// createManySessions creates n top-level sessions titled "Session <i>" in
// order, every other one (the even ones) in a project named "Many", with
// batches of aliased createSession mutations.
func createManySessions(tb testing.TB, k *kernelProc, n int) {
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
}

// TestWebClientManySessions (test/web/many.mjs, MODE=check): with 2,000
// sessions the sidebar counts every one in its group but draws a bounded
// number, in order; Show more draws the next ones; kernel events rename a
// drawn session; a session opened from the address that was not drawn is
// drawn and marked current.
func TestWebClientManySessions(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the headless Chromium web client check")
	}
	webCheckSetup(t)
	k := startKernel(t, t.TempDir())
	const n = 2000
	createManySessions(t, k, n)
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
