//go:build unix

package graph_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx", for ANALYZE

	"github.com/foya-dev/foya/core"
)

// The Session fields two clients list sessions with: the web client's
// sidebar (edge/web/client/boot.js S_FIELDS) and the CLI's SessionFields
// (client/operations.graphql), which adds the usage ledger's totals.
const (
	sidebarFields = `id title pinned phase updatedAt parentId connectionId model approvalMode project { id name path } worktree { path branch baseRef }`
	cliFields     = `id title phase approvalMode connectionId model parentId project { id name path } createdAt updatedAt headSeq worktree { path branch baseRef } usage { inputTokens outputTokens cachedTokens cost unpricedTokens }`
)

// BenchmarkSessionsQuery10k walks the sessions of a kernel with 10,000 of
// them through GraphQL over HTTP, sessions(first:, after:) page by page,
// as a client would: the request, the resolvers, the response and the
// client's decoding of the pages (cpu-µs/op is the CPU of the whole
// process, client included; decode-µs/op the part of ns/op the client
// spent in json.Unmarshal; kernel-µs/op the wall time of the kernel's
// HTTP handler over the walk's requests). Half the sessions are bound to a project,
// all to a connection; every tenth has a worktree; each has three rows in
// the usage ledger.
func BenchmarkSessionsQuery10k(b *testing.B) {
	const n = 10_000
	k := newTestKernel(b)
	ctx := context.Background()
	conn := k.createConn(b, map[string]any{"name": "fake", "baseUrl": k.fake.BaseURL(), "models": []any{map[string]any{"id": testModel}}})
	p, err := k.svc.CreateProject(ctx, core.ProjectInput{Path: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		m := core.SessionMeta{
			ID: fmt.Sprintf("ses_%05d", i), Title: fmt.Sprintf("session %d", i), ConnectionID: conn.ID, Model: testModel,
			ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: base.Add(time.Duration(i) * time.Second),
		}
		if i%2 == 0 {
			m.ProjectID = p.ID
		}
		if i%10 == 0 {
			m.Worktree = &core.Worktree{Path: "/w/" + m.ID, Branch: "foya/" + m.ID, BaseRef: "HEAD"}
		}
		ev, err := core.NewEvent(m.ID, core.EventSessionCreated, core.SessionPayload{Session: m})
		if err != nil {
			b.Fatal(err)
		}
		evs := []core.Event{ev}
		// The usage ledger rows of three model calls (one of them
		// unpriced), as a session with a turn or two has.
		for j := range 3 {
			cost := 0.001
			u := core.Usage{Model: testModel, InputTokens: 1000, OutputTokens: 100, TotalTokens: 1100, Cost: &cost}
			if j == 2 {
				u.Cost = nil
			}
			ev, err := core.NewEvent(m.ID, core.EventUsage, core.UsagePayload{Route: "r", ConnectionID: conn.ID, Purpose: "turn", Usage: u})
			if err != nil {
				b.Fatal(err)
			}
			evs = append(evs, ev)
		}
		if _, err := k.db.Append(ctx, m.ID, 0, evs); err != nil {
			b.Fatal(err)
		}
	}
	if k.pgURL != "" {
		// As autovacuum does about a minute after a bulk load: without
		// statistics PostgreSQL's planner takes the 10,000 sessions for a
		// few dozen and sorts them all for each page (3.8-7.4 ms a page of
		// 100 instead of 0.05-0.13 ms; docs/postgresql.md).
		pg, err := sql.Open("pgx", k.pgURL)
		if err != nil {
			b.Fatal(err)
		}
		_, err = pg.ExecContext(ctx, "ANALYZE")
		pg.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	url := k.srv.URL + "/graphql"
	// served is the kernel's time: the wall time of its HTTP handler, from
	// the request's headers read to the response written, summed over the
	// requests of a walk (the client's encoding, connection and decoding
	// are outside it).
	var served atomic.Int64
	inner := k.srv.Config.Handler
	k.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		inner.ServeHTTP(w, r)
		served.Add(int64(time.Since(start)))
	})
	var decoding time.Duration // the client's json.Unmarshal of the pages
	// post runs one operation and returns the ids of the sessions listed.
	post := func(b *testing.B, query string, vars map[string]any) []struct{ ID string } {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		resp, err := http.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		var out struct {
			Data   struct{ Sessions []struct{ ID string } }
			Errors []any
		}
		start := time.Now()
		err = json.Unmarshal(raw, &out)
		decoding += time.Since(start)
		if err != nil || len(out.Errors) > 0 {
			b.Fatalf("%v %s", err, raw[:min(len(raw), 500)])
		}
		return out.Data.Sessions
	}
	walk := func(b *testing.B, fields string, size int) {
		query := fmt.Sprintf(`query($after: ID) { sessions(first: %d, after: $after) { %s } }`, size, fields)
		var after any
		seen := 0
		for {
			page := post(b, query, map[string]any{"after": after})
			seen += len(page)
			if len(page) < size {
				break
			}
			after = page[len(page)-1].ID
		}
		if seen != n {
			b.Fatalf("%d sessions, want %d", seen, n)
		}
	}
	// The store's walk of the same sessions, for reference: what the
	// kernel spends below GraphQL.
	b.Run("store/pages100", func(b *testing.B) {
		start := processCPU()
		for b.Loop() {
			f, seen := core.SessionFilter{First: 100}, 0
			for {
				page, err := k.db.Sessions(ctx, f)
				if err != nil {
					b.Fatal(err)
				}
				seen += len(page)
				if len(page) < f.First {
					break
				}
				f.After = page[len(page)-1].ID
			}
			if seen != n {
				b.Fatalf("%d sessions, want %d", seen, n)
			}
		}
		b.ReportMetric(float64((processCPU()-start).Microseconds())/float64(b.N), "cpu-µs/op")
	})
	// The web client's sidebar load (edge/web/client/sidebar.js
	// loadSidebar): every session in one response, beside projects,
	// connections and the default models.
	b.Run("web/all", func(b *testing.B) {
		query := `{ sessions { ` + sidebarFields + ` } projects { id name path } connections { id name baseUrl type apiKeyConfigured models { id } } defaultModels { language { connectionId model } } }`
		start := processCPU()
		decoding = 0
		served.Store(0)
		for b.Loop() {
			if got := len(post(b, query, nil)); got != n {
				b.Fatalf("%d sessions, want %d", got, n)
			}
		}
		b.ReportMetric(float64((processCPU()-start).Microseconds())/float64(b.N), "cpu-µs/op")
		b.ReportMetric(float64(time.Duration(served.Load()).Microseconds())/float64(b.N), "kernel-µs/op")
		b.ReportMetric(float64(decoding.Microseconds())/float64(b.N), "decode-µs/op")
	})
	for _, c := range []struct {
		name, fields string
		sizes        []int
	}{
		{"ids", "id", []int{100, 1000}},
		{"sidebar", sidebarFields, []int{100, 1000}},
		{"cli", cliFields, []int{50, 100, 1000}},
	} {
		for _, size := range c.sizes {
			b.Run(fmt.Sprintf("%s/pages%d", c.name, size), func(b *testing.B) {
				start := processCPU()
				decoding = 0
				served.Store(0)
				for b.Loop() {
					walk(b, c.fields, size)
				}
				b.ReportMetric(float64((processCPU()-start).Microseconds())/float64(b.N), "cpu-µs/op")
				b.ReportMetric(float64(time.Duration(served.Load()).Microseconds())/float64(b.N), "kernel-µs/op")
				// The client's share of ns/op: what is left is the
				// kernel's, HTTP included.
				b.ReportMetric(float64(decoding.Microseconds())/float64(b.N), "decode-µs/op")
			})
		}
	}
}

// processCPU is the CPU time (user and system) the process has spent.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
