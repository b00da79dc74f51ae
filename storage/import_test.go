package storage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/storage"
)

// TestImportSessionBothDialects: an import writes the session, its
// projections, attachment records and ledger rows (priced, marked imported:
// in the session's usage, not in the totals) in one transaction; a failing
// import leaves nothing behind.
func TestImportSessionBothDialects(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		hash := strings.Repeat("a", 64)
		att := core.Attachment{ID: "att_imp", Name: "a.png", Kind: "image", MediaType: "image/png", Size: 3, SHA256: hash}
		events := func(sid string, cost float64) []core.Event {
			var out []core.Event
			for _, p := range []struct {
				t core.EventType
				v any
			}{
				{core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: sid, ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: time.Now().UTC()}}},
				{core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleUser, Text: "look", Attachments: []core.Attachment{att}}}},
				{core.EventUsage, core.UsagePayload{Route: "r", ConnectionID: "c", Purpose: "turn", Usage: core.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15, Cost: &cost}}},
			} {
				ev, err := core.NewEvent(sid, p.t, p.v)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, ev)
			}
			return out
		}
		if _, err := db.ImportSession(ctx, "imp1", events("imp1", 0.25), []core.Attachment{att}); err != nil {
			t.Fatal(err)
		}
		if s, err := db.Session(ctx, "imp1"); err != nil || s.HeadSeq != 3 {
			t.Fatalf("imported session %+v, %v", s, err)
		}
		if msgs, err := db.Messages(ctx, "imp1", false); err != nil || len(msgs) != 1 || msgs[0].Attachments[0].ID != "att_imp" {
			t.Fatalf("imported messages %+v, %v", msgs, err)
		}
		if a, err := db.Attachment(ctx, "att_imp"); err != nil || a.SHA256 != hash {
			t.Fatalf("attachment record %+v, %v", a, err)
		}
		// A priced usage of a normal session, and an unpriced one.
		coretest.CreateSession(t, db, "own")
		cost := 0.5
		for _, u := range []core.Usage{{InputTokens: 1, OutputTokens: 1, TotalTokens: 2, Cost: &cost}, {InputTokens: 3, OutputTokens: 4, TotalTokens: 7}} {
			ev, _ := core.NewEvent("own", core.EventUsage, core.UsagePayload{Route: "r", ConnectionID: "c", Purpose: "turn", Usage: u})
			if _, err := db.Append(ctx, "own", core.AnyHead, []core.Event{ev}); err != nil {
				t.Fatal(err)
			}
		}
		if u, err := db.UsageTotals(ctx, "imp1"); err != nil || u.TotalTokens != 15 || u.Cost == nil || *u.Cost != 0.25 || u.UnpricedTokens != 0 {
			t.Fatalf("imported session usage %+v, %v", u, err)
		}
		if u, err := db.UsageTotals(ctx, ""); err != nil || u.TotalTokens != 9 || u.Cost == nil || *u.Cost != 0.5 || u.UnpricedTokens != 7 {
			t.Fatalf("kernel totals (imports left out) %+v, %v", u, err)
		}

		// The same attachment id again fails inside the transaction: no
		// session, no events, no ledger rows remain.
		if _, err := db.ImportSession(ctx, "imp2", events("imp2", 1), []core.Attachment{att}); err == nil {
			t.Fatal("a conflicting import succeeded")
		}
		if _, err := db.Session(ctx, "imp2"); core.ErrorCode(err) != core.CodeNotFound {
			t.Fatalf("session of a failed import: %v", err)
		}
		if evs, err := db.Events(ctx, "imp2", 0, 10); err != nil || len(evs) != 0 {
			t.Fatalf("events of a failed import: %d, %v", len(evs), err)
		}
		if u, _ := db.UsageTotals(ctx, "imp2"); u.TotalTokens != 0 {
			t.Fatalf("ledger rows of a failed import: %+v", u)
		}
	})
}
