package storage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/storage"
)

// TestSessionsIDsOnlyListsTheSame: a list of ids only (read from the
// list's index) names the same sessions in the same order as the full
// list, page by page, top-level only and with children, on both dialects.
func TestSessionsIDsOnlyListsTheSame(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range 25 {
			m := core.SessionMeta{ID: fmt.Sprintf("s%02d", i), ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute,
				CreatedAt: base.Add(time.Duration(i/2) * time.Second)} // pairs share a time: the id orders them
			if i%4 == 3 {
				m.ParentID = "s00"
			}
			ev, err := core.NewEvent(m.ID, core.EventSessionCreated, core.SessionPayload{Session: m})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Append(ctx, m.ID, 0, []core.Event{ev}); err != nil {
				t.Fatal(err)
			}
		}
		walk := func(f core.SessionFilter) []string {
			var ids []string
			for {
				page, err := db.Sessions(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range page {
					if f.IDsOnly && (s.Title != "" || s.CreatedAt != (time.Time{}) || s.HeadSeq != 0) {
						t.Fatalf("an ids-only list read more than the id: %+v", s)
					}
					ids = append(ids, s.ID)
				}
				if len(page) < f.First {
					return ids
				}
				f.After = page[len(page)-1].ID
			}
		}
		for _, children := range []bool{false, true} {
			full := walk(core.SessionFilter{IncludeChildren: children, First: 7})
			ids := walk(core.SessionFilter{IncludeChildren: children, First: 7, IDsOnly: true})
			want := 19
			if children {
				want = 25
			}
			if len(full) != want || !slices.Equal(ids, full) {
				t.Errorf("children %v: ids only %v, the full list %v (%d sessions)", children, ids, full, want)
			}
		}
	})
}
