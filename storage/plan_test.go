package storage

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

// queryLog records the queries a bun.DB runs.
type queryLog struct {
	mu sync.Mutex
	qs []string
}

func (l *queryLog) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (l *queryLog) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.qs = append(l.qs, e.Query)
}

func (l *queryLog) last(t *testing.T) string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.qs) == 0 {
		t.Fatal("no query ran")
	}
	return l.qs[len(l.qs)-1]
}

// plan is SQLite's EXPLAIN QUERY PLAN of q, one step a line.
func plan(t *testing.T, db *bun.DB, q string, args ...any) string {
	t.Helper()
	rows, err := db.DB.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	return strings.Join(steps, "\n")
}

// TestQueryPlans checks that the history reads at scale walk an index in
// the order they return (no sort of the whole table, no scan): the tail of
// a session's messages, the latest event of a type, a page of the session
// list (top-level and all), and the sessions a start resets.
func TestQueryPlans(t *testing.T) {
	ctx := context.Background()
	d := openTempDB(t)
	log := &queryLog{}
	d.r = d.r.WithQueryHook(log)
	// The session list runs its statements on database/sql directly
	// (bound parameters, prepared once): its plan is the plan of
	// sessionsSQL's text with the same arguments.
	var listQ string
	var listArgs []any
	list := func(f core.SessionFilter) error {
		listQ, listArgs = sessionsSQL(f, false)
		_, err := d.Sessions(ctx, f)
		return err
	}
	for _, id := range []string{"a", "b"} {
		ev, err := core.NewEvent(id, core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: id}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Append(ctx, id, 0, []core.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"tail of the messages", func() error {
			_, err := d.MessagePage(ctx, "a", core.MessageQuery{Limit: 50, Last: true})
			return err
		}, "USING INDEX messages_session_seq (session_id=?)"},
		{"latest turn_started", func() error {
			_, err := d.LatestEvent(ctx, "a", core.EventTurnStarted)
			if core.ErrorCode(err) == core.CodeNotFound {
				return nil
			}
			return err
		}, "USING INDEX events_session_type (session_id=? AND type=?)"},
		{"first page of top-level sessions", func() error { return list(core.SessionFilter{First: 50}) }, "SCAN sessions USING INDEX sessions_top_created"},
		{"next page of top-level sessions", func() error { return list(core.SessionFilter{First: 50, After: "a"}) }, "USING INDEX sessions_top_created (created_at"},
		{"next page of top-level session ids", func() error { return list(core.SessionFilter{First: 50, After: "a", IDsOnly: true}) }, "USING COVERING INDEX sessions_top_created (created_at"},
		{"page of all session ids", func() error {
			return list(core.SessionFilter{First: 50, After: "a", IncludeChildren: true, IDsOnly: true})
		}, "USING COVERING INDEX sessions_created (created_at"},
		{"page of all sessions", func() error { return list(core.SessionFilter{First: 50, After: "a", IncludeChildren: true}) }, "USING INDEX sessions_created (created_at"},
		{"children of a session", func() error { return list(core.SessionFilter{ParentID: "a"}) }, "USING INDEX sessions_parent_id (parent_id=?)"},
		{"sessions not idle", func() error { return list(core.SessionFilter{IncludeChildren: true, NotIdle: true}) }, "USING INDEX sessions_busy"},
	} {
		listQ, listArgs = "", nil
		if err := c.run(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		q, args := listQ, listArgs
		if q == "" {
			q, args = log.last(t), nil
		}
		p := plan(t, d.r, q, args...)
		if !strings.Contains(p, c.want) || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("%s: query\n  %s\nplan\n  %s\nwant a step %q and no temporary B-tree", c.name, q, strings.ReplaceAll(p, "\n", "\n  "), c.want)
		}
	}
}

// TestEventInsertsNeedNoEphemeralTable: no statement of the SQLite append
// path opens an ephemeral table. SQLite checks every partial index's
// condition for each row it inserts, and an IN list of more than two
// constants is checked through an ephemeral B-tree built and freed for
// each row (migration 20261202180000_latest_event_index_or).
func TestEventInsertsNeedNoEphemeralTable(t *testing.T) {
	ctx := context.Background()
	d := openTempDB(t)
	for _, q := range appendSQL() {
		args := make([]any, strings.Count(q, "?"))
		if strings.Contains(q, "?1") {
			args = []any{""}
		}
		rows, err := d.w.DB.QueryContext(ctx, "EXPLAIN "+q, args...)
		if err != nil {
			t.Fatalf("explain %.60q: %v", q, err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			if op, _ := vals[1].(string); op == "OpenEphemeral" || op == "OpenAutoindex" || op == "SorterOpen" {
				t.Errorf("%.70q opens an ephemeral table (%s)", q, op)
			}
		}
		rows.Close()
	}
}
