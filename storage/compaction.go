package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

var _ core.HistoryStore = (*DB)(nil)

// latestEventTypes are the event types the partial index
// events_session_type holds (migrations 20261202050000_history_indexes and
// 20261202180000_latest_event_index_or): those LatestEvent is asked for. A
// query may use a partial index only when its WHERE clause repeats the
// index's condition, so LatestEvent adds latestEventTypesSQL for these
// types (TestQueryPlans). The condition is ORs, not an IN list: SQLite
// checks it for every event inserted, and a list of three constants needs
// an ephemeral table each time (TestEventInsertsNeedNoEphemeralTable).
var latestEventTypes = []core.EventType{core.EventTurnStarted, core.EventTurnFinished, core.EventCompactionCheckpoint}

const latestEventTypesSQL = "(type = 'turn_started' OR type = 'turn_finished' OR type = 'compaction_checkpoint')"

// LatestEvent implements core.HistoryStore.
func (d *DB) LatestEvent(ctx context.Context, sessionID string, t core.EventType) (core.Event, error) {
	var row eventRow
	q := d.r.NewSelect().Model(&row).Where("session_id = ? AND type = ?", sessionID, string(t))
	if slices.Contains(latestEventTypes, t) {
		q = q.Where(latestEventTypesSQL)
	}
	err := q.OrderExpr("seq DESC").Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return core.Event{}, core.Errorf(core.CodeNotFound, "no %s event in session %s", t, sessionID)
	}
	if err != nil {
		return core.Event{}, fmt.Errorf("read latest %s of %s: %w", t, sessionID, err)
	}
	return row.event()
}

type routeAnchorRow struct {
	bun.BaseModel `bun:"table:route_anchors"`

	SessionID       string `bun:"session_id,pk"`
	Route           string `bun:"route,pk"`
	ThroughSeq      int64  `bun:"through_seq,notnull"`
	Digest          string `bun:"digest,notnull"`
	InputTokens     int64  `bun:"input_tokens,notnull"`
	EstimatedTokens int64  `bun:"estimated_tokens,notnull"`
	UpdatedAt       string `bun:"updated_at,notnull"`
}

// RouteAnchor implements core.HistoryStore.
func (d *DB) RouteAnchor(ctx context.Context, sessionID, route string) (core.RouteAnchor, error) {
	var row routeAnchorRow
	err := d.r.NewSelect().Model(&row).Where("session_id = ? AND route = ?", sessionID, route).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return core.RouteAnchor{}, core.Errorf(core.CodeNotFound, "no accepted boundary for this route")
	}
	if err != nil {
		return core.RouteAnchor{}, fmt.Errorf("read route anchor: %w", err)
	}
	return core.RouteAnchor{SessionID: row.SessionID, Route: row.Route, ThroughSeq: row.ThroughSeq, Digest: row.Digest,
		InputTokens: row.InputTokens, EstimatedTokens: row.EstimatedTokens}, nil
}

// SaveRouteAnchor implements core.HistoryStore (an upsert). Anchors of a
// deleted session are dropped with it.
func (d *DB) SaveRouteAnchor(ctx context.Context, a core.RouteAnchor) error {
	row := routeAnchorRow{SessionID: a.SessionID, Route: a.Route, ThroughSeq: a.ThroughSeq, Digest: a.Digest,
		InputTokens: a.InputTokens, EstimatedTokens: a.EstimatedTokens, UpdatedAt: fmtTime(time.Now())}
	_, err := d.w.NewInsert().Model(&row).
		On("CONFLICT (session_id, route) DO UPDATE").
		Set("through_seq = EXCLUDED.through_seq, digest = EXCLUDED.digest, input_tokens = EXCLUDED.input_tokens, estimated_tokens = EXCLUDED.estimated_tokens, updated_at = EXCLUDED.updated_at").
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("save route anchor: %w", err)
	}
	return nil
}
