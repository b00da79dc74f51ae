package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// The Session fields of the web client's sidebar (edge/web/client/boot.js
// S_FIELDS), as graph's BenchmarkSessionsQuery10k asks them.
const benchSidebarFields = `id title pinned phase updatedAt parentId connectionId model approvalMode project { id name path } worktree { path branch baseRef }`

// BenchmarkSessionWalk walks the 10,000 sessions of a real `foya serve`
// through GraphQL over HTTP, sessions(first:, after:) page by page, from
// this process as a client in another process would (graph's
// BenchmarkSessionsQuery10k runs the kernel inside the benchmark's own
// process, where the client's decoding and garbage share its CPUs and its
// collector). Half the sessions are bound to a project. It reports the
// walk's wall time as the client sees it less its own decoding (walk-ms:
// the requests, the kernel, the responses), the kernel process's CPU per
// walk (kernel-cpu-ms), and the client's decoding (decode-ms):
//
//	go test -run '^$' -bench SessionWalk -benchtime 20x ./test/e2e
//
// With -kernel-cpuprofile, a 10 s CPU profile of the kernel walking the
// sidebar's fields in pages of 1,000.
func BenchmarkSessionWalk(b *testing.B) {
	const n = 10_000
	k, pprofAddr := startBenchKernel(b)
	createManySessions(b, k, n)
	hc := &http.Client{Transport: &tokenTransport{tokens: kernelTokens.tokens, mu: kernelTokens.mu, base: http.DefaultTransport.(*http.Transport).Clone()}}
	for _, c := range []struct {
		name, fields string
		size         int
	}{
		{"ids/pages1000", "id", 1000},
		{"sidebar/pages100", benchSidebarFields, 100},
		{"sidebar/pages1000", benchSidebarFields, 1000},
	} {
		b.Run(c.name, func(b *testing.B) {
			query := fmt.Sprintf(`query($after: ID) { sessions(first: %d, after: $after) { %s } }`, c.size, c.fields)
			var decoding time.Duration
			walk := func() {
				var after any
				seen := 0
				for {
					body, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"after": after}})
					resp, err := hc.Post(k.url()+"/graphql", "application/json", bytes.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					raw, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					var out struct {
						Data   struct{ Sessions []struct{ ID string } }
						Errors []any
					}
					err = json.Unmarshal(raw, &out)
					decoding += time.Since(start)
					if err != nil || len(out.Errors) > 0 {
						b.Fatalf("%v %s", err, raw[:min(len(raw), 500)])
					}
					page := out.Data.Sessions
					seen += len(page)
					if len(page) < c.size {
						break
					}
					after = page[len(page)-1].ID
				}
				if seen != n {
					b.Fatalf("%d sessions, want %d", seen, n)
				}
			}
			walk() // the connection and the kernel's statements, made once
			if pprofAddr != "" && *kernelCPUProfile != "" && c.name == "sidebar/pages1000" {
				profileKernel(context.Background(), b, pprofAddr, *kernelCPUProfile, walk)
			}
			decoding = 0
			cpu := processCPU(k.cmd.Process.Pid)
			start := time.Now()
			b.ResetTimer()
			for range b.N {
				walk()
			}
			b.StopTimer()
			wall := time.Since(start)
			kernel := processCPU(k.cmd.Process.Pid) - cpu
			per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(per(wall-decoding), "walk-ms")
			b.ReportMetric(per(kernel), "kernel-cpu-ms")
			b.ReportMetric(per(decoding), "decode-ms")
		})
	}
}
