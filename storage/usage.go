package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

type usageRow struct {
	bun.BaseModel `bun:"table:usage_ledger"`

	ID           int64  `bun:"id,pk,autoincrement"`
	SessionID    string `bun:"session_id,notnull"`
	EventSeq     int64  `bun:"event_seq,notnull"`
	Route        string `bun:"route,notnull"`
	ConnectionID string `bun:"connection_id,notnull"`
	Model        string `bun:"model,notnull"`
	Purpose      string `bun:"purpose,notnull"`
	InputTokens  int64  `bun:"input_tokens,notnull"`
	OutputTokens int64  `bun:"output_tokens,notnull"`
	TotalTokens  int64  `bun:"total_tokens,notnull"`
	CachedTokens int64  `bun:"cached_tokens,notnull"`
	CacheWrites  int64  `bun:"cache_write_tokens,notnull"`
	Estimated    bool   `bun:"estimated,notnull"`
	At           string `bun:"at,notnull"`
	// Cost is in US dollars; NULL when the model had no prices.
	Cost *float64 `bun:"cost"`
	// Imported rows came with an imported session: they count in the
	// session's usage but not in the kernel's totals (nothing was spent).
	Imported bool `bun:"imported,notnull"`
}

// recordUsage writes the ledger row of a usage event; it runs in the append
// transaction (but not on rebuild: the ledger is not a projection, it
// outlives deleted sessions). imported marks the rows of an imported session.
// On SQLite the insert is a statement prepared once (txWriter.insertUsage).
func recordUsage(ctx context.Context, w *txWriter, ev core.Event, imported bool) error {
	var p core.UsagePayload
	if err := ev.Decode(&p); err != nil {
		return err
	}
	u := p.Usage
	return w.insertUsage(ctx, usageRow{
		SessionID: ev.SessionID, EventSeq: ev.Seq, Route: p.Route, ConnectionID: p.ConnectionID,
		Model: u.Model, Purpose: p.Purpose, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		TotalTokens: u.TotalTokens, CachedTokens: u.CachedTokens, CacheWrites: u.CacheWriteTokens, Estimated: u.Estimated, At: fmtTime(ev.At),
		Cost: u.Cost, Imported: imported,
	})
}

// sqlAddSessionUsage adds a ledger row's figures (the args of
// txWriter.insertUsage) to its session's totals: the sums of its ledger
// rows, kept on the session's row so that the session list reads them with
// the rows it lists (see the migration session_usage_totals).
const sqlAddSessionUsage = "UPDATE sessions SET usage_input = usage_input + ?, usage_output = usage_output + ?, " +
	"usage_total = usage_total + ?, usage_cached = usage_cached + ?, usage_cache_writes = usage_cache_writes + ?, " +
	"usage_estimated = CASE WHEN ? THEN 1 ELSE usage_estimated END, " +
	"usage_cost = CASE WHEN ? IS NULL THEN usage_cost ELSE COALESCE(usage_cost, 0) + ? END, " +
	"usage_unpriced = usage_unpriced + ? WHERE id = ?"

// sessionUsageColumns are the session row's totals, in usageSumColumns'
// order.
const sessionUsageColumns = "usage_input, usage_output, usage_total, usage_cached, usage_cache_writes, usage_estimated, usage_cost, usage_unpriced"

// sqlSessionUsageFromLedger sets every session's totals to its ledger
// rows' sums (after RebuildProjections, which writes the rows anew).
var sqlSessionUsageFromLedger = "UPDATE sessions SET (" + sessionUsageColumns + ") = (SELECT " + usageSumsList +
	" FROM usage_ledger WHERE usage_ledger.session_id = sessions.id) WHERE EXISTS (SELECT 1 FROM usage_ledger WHERE usage_ledger.session_id = sessions.id)"

// usageSums is one row of the ledger's sums (withUsageSums), with the
// session it sums when grouped by session.
type usageSums struct {
	SessionID                                                      string
	Input, Output, Total, Cached, CacheWrites, Estimated, Unpriced int64
	Cost                                                           sql.NullFloat64
}

// usageSumColumns are the ledger's sums, in usageSums' order (Input,
// Output, Total, Cached, CacheWrites, Estimated, Cost, Unpriced). Cost
// sums the priced rows (NULL when none is priced); Unpriced counts the
// tokens of the others.
var usageSumColumns = []struct{ expr, name string }{
	{"CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT)", "input"},
	{"CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT)", "output"},
	{"CAST(COALESCE(SUM(total_tokens), 0) AS BIGINT)", "total"},
	{"CAST(COALESCE(SUM(cached_tokens), 0) AS BIGINT)", "cached"},
	{"CAST(COALESCE(SUM(cache_write_tokens), 0) AS BIGINT)", "cache_writes"},
	{"COALESCE(MAX(CASE WHEN estimated THEN 1 ELSE 0 END), 0)", "estimated"},
	{"SUM(cost)", "cost"},
	{"CAST(COALESCE(SUM(CASE WHEN cost IS NULL THEN total_tokens ELSE 0 END), 0) AS BIGINT)", "unpriced"},
}

// withUsageSums selects the ledger's sums into q, as usageSums reads
// them.
func withUsageSums(q *bun.SelectQuery) *bun.SelectQuery {
	for _, c := range usageSumColumns {
		q = q.ColumnExpr(c.expr + " AS " + c.name)
	}
	return q
}

// usageSumsList is usageSumColumns' expressions as a select list.
var usageSumsList = func() string {
	exprs := make([]string, len(usageSumColumns))
	for i, c := range usageSumColumns {
		exprs[i] = c.expr
	}
	return strings.Join(exprs, ", ")
}()

// usageTotalsSQL is UsageTotals' query: of one session (where holds its
// placeholder) or of the kernel (NOT imported).
func usageTotalsSQL(where string) string {
	return "SELECT " + usageSumsList + " FROM usage_ledger WHERE " + where
}

// UsageTotals' queries: of the kernel, of a session on SQLite, of a
// session on PostgreSQL.
var (
	usageOfKernelSQL    = usageTotalsSQL("NOT imported")
	usageOfSessionSQL   = usageTotalsSQL("session_id = ?")
	usageOfSessionSQLPG = usageTotalsSQL("session_id = $1")
)

// sums are where a row of usageSumColumns scans to, in their order.
func (r *usageSums) sums() []any {
	return []any{&r.Input, &r.Output, &r.Total, &r.Cached, &r.CacheWrites, &r.Estimated, &r.Cost, &r.Unpriced}
}

func (r usageSums) usage() core.Usage {
	u := core.Usage{InputTokens: r.Input, OutputTokens: r.Output, TotalTokens: r.Total, CachedTokens: r.Cached,
		CacheWriteTokens: r.CacheWrites, Estimated: r.Estimated != 0, UnpricedTokens: r.Unpriced}
	if r.Cost.Valid {
		u.Cost = &r.Cost.Float64
	}
	return u
}

// UsageTotals implements core.UsageStore: the ledger's sums, for one session
// or (sessionID "") for everything ever spent by this kernel (the rows of
// imported sessions are left out there).
//
// Each is a statement prepared once on the SQLite readers (listQuery):
// built and parsed by bun and SQLite, the query cost a session's
// createSession or session(id:) { usage } ~0.3 ms.
func (d *DB) UsageTotals(ctx context.Context, sessionID string) (core.Usage, error) {
	var rows *sql.Rows
	var err error
	switch {
	case sessionID == "":
		rows, err = d.listQuery(ctx, usageOfKernelSQL)
	case d.pg:
		rows, err = d.listQuery(ctx, usageOfSessionSQLPG, noNUL(sessionID))
	default:
		rows, err = d.listQuery(ctx, usageOfSessionSQL, noNUL(sessionID))
	}
	if err != nil {
		return core.Usage{}, fmt.Errorf("sum usage: %w", err)
	}
	defer rows.Close()
	var r usageSums
	if rows.Next() {
		err = rows.Scan(r.sums()...)
	}
	if err = errors.Join(err, rows.Err(), rows.Close()); err != nil {
		return core.Usage{}, fmt.Errorf("sum usage: %w", err)
	}
	return r.usage(), nil
}

var _ core.SessionUsageTotals = (*DB)(nil)

// SessionUsageTotals implements core.SessionUsageTotals: UsageTotals of
// each session, in one query per 500 sessions, for sessions read without
// their totals (a session list reads them with its sessions when asked,
// SessionFilter.Usage; Session.children does not). On SQLite the ids go as
// one JSON array to a statement prepared once (usageOfSessionsSQL): bun
// wrote every id into the text, a statement SQLite parsed anew for each
// page (~0.25 ms a page of 100).
func (d *DB) SessionUsageTotals(ctx context.Context, sessionIDs []string) (map[string]core.Usage, error) {
	out := make(map[string]core.Usage, len(sessionIDs))
	for ids := range slices.Chunk(sessionIDs, 500) {
		var rows []usageSums
		var err error
		if d.pg {
			err = withUsageSums(d.r.NewSelect().Table("usage_ledger").Column("session_id")).
				Where("session_id IN (?)", bun.List(ids)).Group("session_id").Scan(ctx, &rows)
		} else {
			rows, err = d.sqliteUsageOfSessions(ctx, ids)
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("sum usage of sessions: %w", err)
		}
		for _, r := range rows {
			out[r.SessionID] = r.usage()
		}
	}
	return out, nil
}

// usageOfSessionsSQL is SessionUsageTotals' query on SQLite: the sums of
// the sessions of a JSON array of ids, by session.
var usageOfSessionsSQL = "SELECT session_id, " + usageSumsList +
	" FROM usage_ledger WHERE session_id IN (SELECT value FROM json_each(?)) GROUP BY session_id"

func (d *DB) sqliteUsageOfSessions(ctx context.Context, ids []string) (out []usageSums, err error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := d.listQuery(ctx, usageOfSessionsSQL, string(list))
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	for rows.Next() {
		var r usageSums
		if err := rows.Scan(append([]any{&r.SessionID}, r.sums()...)...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

var _ core.KernelUsageRecorder = (*DB)(nil)

// RecordKernelUsage implements core.KernelUsageRecorder: a ledger row of no
// session (session_id "" and event_seq 0), such as the usage of
// generateImage without a sessionId. It counts in the kernel's totals.
func (d *DB) RecordKernelUsage(ctx context.Context, p core.UsagePayload, at time.Time) error {
	u := p.Usage
	row := usageRow{
		Route: p.Route, ConnectionID: p.ConnectionID, Model: u.Model, Purpose: p.Purpose,
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens, CachedTokens: u.CachedTokens,
		CacheWrites: u.CacheWriteTokens, Estimated: u.Estimated, At: fmtTime(at), Cost: u.Cost,
	}
	if _, err := d.w.NewInsert().Model(&row).Returning("NULL").Exec(ctx); err != nil {
		return fmt.Errorf("record kernel usage: %w", err)
	}
	return nil
}
