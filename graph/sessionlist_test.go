package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/graph"
)

// listSessionFields selects every field the hand-written session list
// writes (graph/sessionlist.go), with aliases and __typename.
const listSessionFields = `__typename id title pinned connectionId model reasoningEffort approvalMode phase agentMode parentId source createdAt updatedAt headSeq
	named: title  again: id
	project { __typename id name path createdAt p: path }
	worktree { __typename path branch baseRef }
	usage { __typename inputTokens outputTokens totalTokens cachedTokens cacheWriteTokens estimated cost unpricedTokens }`

// seedListSessions gives k sessions that use every field of the list: odd
// text, projects, worktrees, children, usage with and without a price.
func seedListSessions(t testing.TB, k *testKernel) {
	t.Helper()
	ctx := context.Background()
	conn := k.createConn(t, map[string]any{"name": "fake", "baseUrl": k.fake.BaseURL(), "models": []any{map[string]any{"id": testModel}}})
	p, err := k.svc.CreateProject(ctx, core.ProjectInput{Path: t.TempDir(), Name: "proj \"one\" \\ ü"})
	if err != nil {
		t.Fatal(err)
	}
	titles := []string{"", "plain", "quote \" back\\slash", "tab\tnl\ncr\r ctl\x01\x1f\x7f", "ünïcødé 😀 </script> & \u2028\u2029\u2027\u202a", strings.Repeat("long ", 200)}
	base := time.Date(2026, 1, 1, 0, 0, 0, 123456789, time.UTC)
	for i := range 9 {
		m := core.SessionMeta{
			ID: fmt.Sprintf("ses_%02d", i), Title: titles[i%len(titles)], Pinned: i%4 == 1,
			ApprovalMode: []core.ApprovalMode{core.ApprovalAsk, core.ApprovalExplore, core.ApprovalBypass, core.ApprovalGuarded}[i%4],
			AgentMode:    []core.AgentMode{core.AgentExecute, core.AgentPlan}[i%2],
			CreatedAt:    base.Add(time.Duration(i) * time.Minute),
		}
		if i%3 != 0 {
			m.ConnectionID, m.Model, m.ReasoningEffort = conn.ID, testModel, "high"
		}
		if i%2 == 0 {
			m.ProjectID = p.ID
		}
		if i == 4 {
			m.ProjectID = "prj_gone" // a project deleted since: null
		}
		if i%3 == 1 {
			m.Worktree = &core.Worktree{Path: "/w/" + m.ID, Branch: "foya/" + m.ID, BaseRef: "main"}
		}
		if i == 7 {
			m.Source = "acp"
		}
		evs := []core.Event{mustEvent(t, m.ID, core.EventSessionCreated, core.SessionPayload{Session: m})}
		if i%2 == 1 {
			u := core.Usage{InputTokens: int64(i * 1000), OutputTokens: 7, TotalTokens: int64(i*1000 + 7), CachedTokens: 3, CacheWriteTokens: 2}
			if i != 5 {
				cost := float64(i) / 3
				u.Cost = &cost
			}
			evs = append(evs, mustEvent(t, m.ID, core.EventUsage, core.UsagePayload{Usage: u, Purpose: "turn"}))
		}
		if _, err := k.db.Append(ctx, m.ID, 0, evs); err != nil {
			t.Fatal(err)
		}
		if i%4 == 2 {
			c := core.SessionMeta{ID: m.ID + "_child", ParentID: m.ID, ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: m.CreatedAt.Add(time.Second)}
			if _, err := k.db.Append(ctx, c.ID, 0, []core.Event{mustEvent(t, c.ID, core.EventSessionCreated, core.SessionPayload{Session: c})}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func mustEvent(t testing.TB, sessionID string, kind core.EventType, payload any) core.Event {
	t.Helper()
	ev, err := core.NewEvent(sessionID, kind, payload)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestSessionListSameAsGqlgen: the session list written by hand is, byte
// for byte, what gqlgen answers for the same operation (asked with
// @include(if: true) on the sessions field, which the hand-written path
// leaves to gqlgen), for every field it writes, through fragments, with
// paging, children, aliases, other root fields beside it (the web
// client's and the CLI's operations) and errors; and it leaves every other
// shape to gqlgen.
func TestSessionListSameAsGqlgen(t *testing.T) {
	k := newTestKernel(t)
	seedListSessions(t, k)
	// Each operation has %s where the sessions field's directive goes.
	for _, c := range []struct {
		name, query string
		vars        map[string]any
		served      bool // answered by hand (else an error, left to gqlgen)
	}{
		{"every field", `{ list: sessions %s { ` + listSessionFields + ` } }`, nil, true},
		{"children", `{ list: sessions(includeChildren: true) %s { ` + listSessionFields + ` } }`, nil, true},
		{"a page", `{ sessions(first: 3) %s { id title project { id } } }`, nil, true},
		{"after", `{ sessions(first: 2, after: "ses_05") %s { id } }`, nil, true},
		{"variables", `query($n: Int, $after: ID, $c: Boolean) { sessions(first: $n, after: $after, includeChildren: $c) %s { id parentId } }`, map[string]any{"n": 4, "after": "ses_07", "c": true}, true},
		{"the end", `{ sessions(first: 5, after: "ses_00") %s { id } }`, nil, true},
		{"fragments", `query { sessions(first: 4) %s { ...S ... on Session { pinned p2: project { ...P } } id } } fragment S on Session { id title project { ...P name } usage { ... on Usage { cost } } } fragment P on Project { id path }`, nil, true},
		{"skip and include", `query($yes: Boolean!) { sessions %s { id title @skip(if: $yes) model @include(if: $yes) phase @include(if: false) } }`, map[string]any{"yes": true}, true},
		{"merged fields", `{ sessions %s { id id title project { id } project { path } } }`, nil, true},
		{"with other fields", `{ __typename projects { id name path } sessions %s { id title } connections { id name } }`, nil, true},
		{"other fields after", `{ sessions(first: 2) %s { id } projects { id } }`, nil, true},
		{"other fields before", `{ connections { id } s: sessions %s { id } }`, nil, true},
		{"the web client's sidebar", `{ sessions %s { id title pinned phase updatedAt parentId connectionId model approvalMode project { id name path } worktree { path branch baseRef } } projects { id name path } connections { id name baseUrl type apiKeyConfigured models { id capabilities { contextWindow } } } defaultModels { language { connectionId model } fast { connectionId model } } }`, nil, true},
		{"the CLI's list", `query Sessions($includeChildren: Boolean) { sessions(includeChildren: $includeChildren) %s { ...SessionFields } connections { id name } } fragment ProjectFields on Project { id name path } fragment SessionFields on Session { id title phase approvalMode connectionId model parentId project { ...ProjectFields } createdAt updatedAt headSeq worktree { path branch baseRef } usage { inputTokens outputTokens cachedTokens cost unpricedTokens } }`, map[string]any{"includeChildren": true}, true},
		{"first out of range", `{ sessions(first: 0) %s { id } }`, nil, false},
		{"unknown cursor", `{ sessions(first: 2, after: "ses_nope") %s { id } }`, nil, false},
		{"an error beside", `{ events(sessionId: "ses_nope") { seq } sessions %s { id } }`, nil, false}, // (the error first: the directive moves no location)
	} {
		t.Run(c.name, func(t *testing.T) {
			served := graph.SessionListServed.Load()
			fast := k.raw(t, fmt.Sprintf(c.query, ""), c.vars)
			if got := graph.SessionListServed.Load() - served; (got == 1) != c.served {
				t.Fatalf("answered by hand: %d, want %v: %s", got, c.served, fast)
			}
			served = graph.SessionListServed.Load()
			slow := k.raw(t, fmt.Sprintf(c.query, "@include(if: true)"), c.vars)
			if got := graph.SessionListServed.Load() - served; got != 0 {
				t.Fatalf("@include(if: true) was answered by hand")
			}
			if !bytes.Equal(fast, slow) {
				i := 0
				for i < min(len(fast), len(slow)) && fast[i] == slow[i] {
					i++
				}
				t.Fatalf("they differ at byte %d:\nby hand: …%s\ngqlgen:  …%s", i, fast[max(i-40, 0):min(i+40, len(fast))], slow[max(i-40, 0):min(i+40, len(slow))])
			}
			if !json.Valid(fast) {
				t.Fatalf("invalid JSON: %s", fast)
			}
		})
	}
	// A list of ids only (read from the store's index) names the same
	// sessions in the same order as a list with more fields, by hand and
	// through gqlgen.
	ids := func(q string) string {
		var out struct {
			Data map[string][]struct{ ID string }
		}
		if err := json.Unmarshal(k.raw(t, q, nil), &out); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, s := range out.Data["sessions"] {
			b.WriteString(s.ID + " ")
		}
		return b.String()
	}
	for _, children := range []string{"false", "true"} {
		want := ids(`{ sessions(includeChildren: ` + children + `) { id title } }`)
		for _, q := range []string{`{ sessions(includeChildren: %s) { id } }`, `{ sessions(includeChildren: %s) @include(if: true) { __typename id } }`} {
			if got := ids(fmt.Sprintf(q, children)); got != want || strings.Count(want, " ") < 5 {
				t.Errorf("%s: %s, want %s", fmt.Sprintf(q, children), got, want)
			}
		}
	}
	// Shapes left to gqlgen.
	for _, q := range []string{
		`{ sessions { id route } }`,
		`{ sessions { id messages(last: 1) { seq } } }`,
		`{ sessions { id worktree { dirty } } }`,
		`{ sessions @include(if: true) { id } }`,
		`{ a: sessions(first: 1) { id } b: sessions(first: 2) { id } }`,
	} {
		served := graph.SessionListServed.Load()
		var out struct {
			Errors []any
		}
		if err := json.Unmarshal(k.raw(t, q, nil), &out); err != nil || len(out.Errors) > 0 {
			t.Fatalf("%s: %v %v", q, err, out.Errors)
		}
		if graph.SessionListServed.Load() != served {
			t.Errorf("%s: answered by hand", q)
		}
	}
}

// TestSessionListResponseBudget: the hand-written list is refused at the
// same response limit as gqlgen's answer, alone and beside other root
// fields gqlgen answers: with the smallest limit gqlgen answers under, the
// list is answered by hand, and one byte less gets gqlgen's BAD_INPUT
// either way.
func TestSessionListResponseBudget(t *testing.T) {
	for _, c := range []struct{ name, query string }{
		{"alone", "{ sessions(includeChildren: true) %s { " + listSessionFields + " } }"},
		{"beside other fields", "{ projects { id name path } sessions(includeChildren: true) %s { " + listSessionFields + " } connections { id name } }"},
	} {
		t.Run(c.name, func(t *testing.T) {
			seeded := newTestKernel(t)
			seedListSessions(t, seeded)
			kernel := func(max int64) *testKernel {
				return seeded.withEdge(t, func(c *edge.Config) { c.Limits.MaxResponseBytes = max })
			}
			tooLarge := func(raw []byte) bool {
				var out struct{ Errors []struct{ Message string } }
				if err := json.Unmarshal(raw, &out); err != nil {
					t.Fatal(err)
				}
				return len(out.Errors) == 1 && strings.Contains(out.Errors[0].Message, "response size limit")
			}
			byGqlgen := fmt.Sprintf(c.query, "@include(if: true)")
			// The smallest limit gqlgen answers under, by bisection.
			lo, hi := int64(1), int64(64<<10)
			if tooLarge(kernel(hi).raw(t, byGqlgen, nil)) {
				t.Fatal("the list does not fit 64 KiB")
			}
			for lo < hi {
				mid := (lo + hi) / 2
				if tooLarge(kernel(mid).raw(t, byGqlgen, nil)) {
					lo = mid + 1
				} else {
					hi = mid
				}
			}
			byHand := fmt.Sprintf(c.query, "")
			k := kernel(lo)
			served := graph.SessionListServed.Load()
			if raw := k.raw(t, byHand, nil); tooLarge(raw) || graph.SessionListServed.Load() != served+1 {
				t.Fatalf("limit %d: gqlgen answers, by hand: %s", lo, raw)
			}
			k = kernel(lo - 1)
			if raw := k.raw(t, byHand, nil); !tooLarge(raw) {
				t.Fatalf("limit %d: gqlgen refuses, by hand: %s", lo-1, raw)
			}
		})
	}
}

// TestSessionListConcurrentPages: requests for pages of the list written
// by hand, many at once, each get the answer they get alone, byte for
// byte: the buffers and arrays the pages are written into are reused from
// request to request (a buffer handed back before its response was
// written, or an array still in use, would mix two answers).
func TestSessionListConcurrentPages(t *testing.T) {
	k := newTestKernel(t)
	seedListSessions(t, k)
	post := func(query string, vars map[string]any) ([]byte, error) {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		resp, err := http.Post(k.srv.URL+"/graphql", "application/json", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
	type op struct {
		query string
		vars  map[string]any
	}
	var ops []op
	for _, fields := range []string{"id", "id title pinned phase updatedAt parentId connectionId model approvalMode project { id name path } worktree { path branch baseRef }", listSessionFields} {
		for _, first := range []int{1, 3, 9} {
			for _, after := range []any{nil, "ses_07", "ses_03"} {
				ops = append(ops, op{`query($n: Int, $after: ID) { sessions(first: $n, after: $after, includeChildren: true) { ` + fields + ` } }`, map[string]any{"n": first, "after": after}})
			}
		}
	}
	want := make([][]byte, len(ops))
	for i, o := range ops {
		raw, err := post(o.query, o.vars)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(`"errors"`)) {
			t.Fatalf("%s %v: %s", o.query, o.vars, raw)
		}
		want[i] = raw
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 40 {
				i := (g*7 + j) % len(ops)
				got, err := post(ops[i].query, ops[i].vars)
				if err == nil && !bytes.Equal(got, want[i]) {
					err = fmt.Errorf("%s %v, at the same time as other pages:\n%s\nalone:\n%s", ops[i].query, ops[i].vars, got, want[i])
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
