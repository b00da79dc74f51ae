package storage_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/storage"
)

// checkRowTotals checks that every listed session's totals, as Session and
// Sessions (asked for them) read them with the session, are its ledger's
// sums; a list not asked for them reads none.
func checkRowTotals(t *testing.T, db *storage.DB, ids ...string) {
	t.Helper()
	ctx := context.Background()
	without, err := db.Sessions(ctx, core.SessionFilter{IncludeChildren: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range without {
		if s.UsageTotals != nil {
			t.Errorf("Sessions without Usage: %s's totals %+v", s.ID, s.UsageTotals)
		}
	}
	list, err := db.Sessions(ctx, core.SessionFilter{IncludeChildren: true, Usage: true})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*core.Usage{}
	for _, s := range list {
		listed[s.ID] = s.UsageTotals
	}
	for _, id := range ids {
		got, want, same, err := db.RowTotals(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !same {
			t.Errorf("Session(%s).UsageTotals = %+v, the ledger's sums %+v", id, got, want)
		}
		if u := listed[id]; u == nil || !storage.SameUsage(*u, want) {
			t.Errorf("Sessions: %s's totals %+v, the ledger's sums %+v", id, u, want)
		}
	}
}

// TestSessionUsageTotalsOnTheRow: the totals a session's row keeps are its
// ledger's sums after priced, unpriced, estimated and cache-writing
// usage, an import (its rows count in the session), a fork (which has no
// ledger rows of its own) and a rebuild of the projections, on both
// dialects.
func TestSessionUsageTotalsOnTheRow(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		usage := func(sid string, u core.Usage) core.Event {
			ev, err := core.NewEvent(sid, core.EventUsage, core.UsagePayload{Route: "r", ConnectionID: "c", Purpose: "turn", Usage: u})
			if err != nil {
				t.Fatal(err)
			}
			return ev
		}
		price := func(v float64) *float64 { return &v }
		coretest.CreateSession(t, db, "a")
		coretest.CreateSession(t, db, "b")
		coretest.CreateSession(t, db, "none")
		checkRowTotals(t, db, "a", "b", "none")
		for _, ev := range []core.Event{
			usage("a", core.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15, CachedTokens: 4, CacheWriteTokens: 2, Cost: price(0.1)}),
			usage("a", core.Usage{InputTokens: 1, OutputTokens: 1, TotalTokens: 2}), // unpriced
			usage("a", core.Usage{InputTokens: 7, OutputTokens: 3, TotalTokens: 10, Cost: price(0.2)}),
			usage("b", core.Usage{InputTokens: 100, TotalTokens: 100, Estimated: true}),
		} {
			if _, err := db.Append(ctx, ev.SessionID, core.AnyHead, []core.Event{ev}); err != nil {
				t.Fatal(err)
			}
		}
		// Several in one append, beside a message.
		if _, err := db.Append(ctx, "b", core.AnyHead, []core.Event{
			coretest.MessageEvent(t, "b", core.RoleUser, "hi"),
			usage("b", core.Usage{InputTokens: 2, OutputTokens: 2, TotalTokens: 4, Cost: price(0.05)}),
			usage("b", core.Usage{InputTokens: 3, OutputTokens: 3, TotalTokens: 6, Cost: price(0.05)}),
		}); err != nil {
			t.Fatal(err)
		}
		checkRowTotals(t, db, "a", "b", "none")
		if s, _ := db.Session(ctx, "a"); s.UsageTotals == nil || s.UsageTotals.TotalTokens != 27 || s.UsageTotals.UnpricedTokens != 2 ||
			s.UsageTotals.CacheWriteTokens != 2 || s.UsageTotals.Cost == nil || math.Abs(*s.UsageTotals.Cost-0.3) > 1e-9 {
			t.Errorf("a's totals %+v", s.UsageTotals)
		}

		// An import's usage counts in the imported session.
		created, err := core.NewEvent("imp", core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: "imp", ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: time.Now().UTC()}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ImportSession(ctx, "imp", []core.Event{created, usage("imp", core.Usage{InputTokens: 5, TotalTokens: 5, Cost: price(1)})}, nil); err != nil {
			t.Fatal(err)
		}
		// A fork copies messages, not usage: it starts without ledger rows.
		forked, err := core.NewEvent("fork", core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: "fork", ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: time.Now().UTC()}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ForkHistory(ctx, forked, "b", 100); err != nil {
			t.Fatal(err)
		}
		checkRowTotals(t, db, "a", "b", "none", "imp", "fork")

		// A rebuild writes the rows anew; their totals come from the
		// ledger.
		if _, err := db.RebuildProjections(ctx); err != nil {
			t.Fatal(err)
		}
		checkRowTotals(t, db, "a", "b", "none", "imp", "fork")
	})
}
