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

// Session implements core.SessionStore.
func (d *DB) Session(ctx context.Context, id string) (core.Session, error) {
	var row sessionRow
	err := d.r.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return core.Session{}, core.Errorf(core.CodeNotFound, "session %s not found", id)
	}
	if err != nil {
		return core.Session{}, fmt.Errorf("read session %s: %w", id, err)
	}
	return row.session()
}

// Sessions implements core.SessionStore; newest first.
func (d *DB) Sessions(ctx context.Context, f core.SessionFilter) ([]core.Session, error) {
	var rows []sessionRow
	q := d.r.NewSelect().Model(&rows).OrderExpr("created_at DESC, id")
	switch {
	case f.ParentID != "":
		q = q.Where("parent_id = ?", f.ParentID)
	case !f.IncludeChildren:
		q = q.Where("parent_id IS NULL")
	}
	if f.ProjectID != "" {
		q = q.Where("project_id = ?", f.ProjectID)
	}
	if f.ConnectionID != "" {
		q = q.Where("connection_id = ?", f.ConnectionID)
	}
	if f.NotIdle {
		q = q.Where("phase <> ?", string(core.PhaseIdle))
	}
	if f.After != "" {
		// The cursor's creation time is read in the same query (one
		// round trip a page on PostgreSQL); created_at <= bounds the walk
		// of the (created_at DESC, id) index, the OR alone would make it
		// start from the newest.
		const at = "(SELECT created_at FROM sessions WHERE id = ?)"
		q = q.Where("created_at <= "+at+" AND (created_at < "+at+" OR id > ?)", f.After, f.After, f.After)
	}
	if f.First > 0 {
		q = q.Limit(int64(f.First))
	}
	if err := q.Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	if len(rows) == 0 && f.After != "" {
		// An empty page: the end of the list, or a cursor that names no
		// session (the comparisons with its missing time are NULL).
		exists, err := d.r.NewSelect().Model((*sessionRow)(nil)).Where("id = ?", f.After).Exists(ctx)
		if err != nil {
			return nil, fmt.Errorf("list sessions after %s: %w", f.After, err)
		}
		if !exists {
			return nil, core.Errorf(core.CodeNotFound, "after: session %s not found (deleted since the previous page? list again from the start)", f.After)
		}
	}
	return mapRows(rows, sessionRow.session)
}

// Messages implements core.SessionStore.
func (d *DB) Messages(ctx context.Context, sessionID string, includeInactive bool) ([]core.Message, error) {
	var rows []messageRow
	q := d.r.NewSelect().Model(&rows).Where("session_id = ?", sessionID).Order("seq")
	if !includeInactive {
		q = q.Where("active = ?", true)
	}
	if err := q.Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read messages of session %s: %w", sessionID, err)
	}
	return mapRows(rows, messageRow.message)
}

// DeleteSession implements core.SessionStore. In the same transaction it
// drops the attachment records that only the deleted messages referred to,
// and it reports the blob hashes nothing refers to any more (messages of
// other sessions — e.g. a fork — and attachment records keep theirs).
func (d *DB) DeleteSession(ctx context.Context, id string) (core.DeletedSessions, error) {
	var out core.DeletedSessions
	err := d.w.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// On PostgreSQL an append in flight finishes before the delete
		// reads anything (and one that comes later finds the tombstone).
		if err := lockSession(ctx, tx, id); err != nil {
			return err
		}
		exists, err := tx.NewSelect().Model((*sessionRow)(nil)).Where("id = ?", id).Exists(ctx)
		if err != nil {
			return fmt.Errorf("find session: %w", err)
		}
		if !exists {
			return core.Errorf(core.CodeNotFound, "session %s not found", id)
		}
		// Descendants, deepest first, then the session itself.
		if err := tx.NewRaw(`WITH RECURSIVE tree(id, depth) AS (
				SELECT CAST(? AS TEXT), 0
				UNION ALL
				SELECT s.id, tree.depth + 1 FROM sessions s JOIN tree ON s.parent_id = tree.id
			) SELECT id FROM tree ORDER BY depth DESC, id`, id).Scan(ctx, &out.IDs); err != nil {
			return fmt.Errorf("find descendants: %w", err)
		}
		descendants := slices.Sorted(slices.Values(out.IDs))
		for _, sid := range descendants {
			if sid != id {
				if err := lockSession(ctx, tx, sid); err != nil {
					return err
				}
			}
		}
		attIDs, hashes, err := referencedArtifacts(ctx, tx, out.IDs)
		if err != nil {
			return err
		}
		now := fmtTime(time.Now())
		for _, sid := range out.IDs {
			for _, table := range []string{"events", "messages", "route_anchors"} {
				if _, err := tx.NewDelete().Table(table).Where("session_id = ?", sid).Exec(ctx); err != nil {
					return fmt.Errorf("delete %s of %s: %w", table, sid, err)
				}
			}
			if _, err := tx.NewDelete().Table("sessions").Where("id = ?", sid).Exec(ctx); err != nil {
				return fmt.Errorf("delete session %s: %w", sid, err)
			}
			if _, err := tx.NewInsert().Model(&tombstoneRow{SessionID: sid, DeletedAt: now}).
				On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
				return fmt.Errorf("record tombstone of %s: %w", sid, err)
			}
		}
		out.OrphanBlobs, err = dropUnreferenced(ctx, tx, attIDs, hashes)
		return err
	})
	if err != nil {
		return core.DeletedSessions{}, fmt.Errorf("delete session %s: %w", id, err)
	}
	return out, nil
}

// referencedArtifacts lists the attachment ids and blob hashes that the
// messages of sessions refer to.
func referencedArtifacts(ctx context.Context, tx bun.Tx, sessions []string) (attIDs, hashes []string, err error) {
	var rows []messageRow
	if err := tx.NewSelect().Model(&rows).Where("session_id IN (?)", bun.List(sessions)).Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, nil, fmt.Errorf("read messages of deleted sessions: %w", err)
	}
	seenA, seenH := map[string]bool{}, map[string]bool{}
	addH := func(h string) {
		if h != "" && !seenH[h] {
			seenH[h] = true
			hashes = append(hashes, h)
		}
	}
	for _, r := range rows {
		m, err := r.message()
		if err != nil {
			return nil, nil, err
		}
		for _, a := range m.Attachments {
			if !seenA[a.ID] {
				seenA[a.ID] = true
				attIDs = append(attIDs, a.ID)
			}
			addH(a.SHA256)
		}
		for _, fc := range m.FileChanges {
			addH(fc.BeforeHash)
			addH(fc.AfterHash)
		}
	}
	return attIDs, hashes, nil
}

// dropUnreferenced deletes attachment records no remaining message mentions
// and returns the hashes no remaining message or record mentions. Message
// payloads are JSON, so a mention is a substring match of the (random id or
// 64-hex hash) value.
func dropUnreferenced(ctx context.Context, tx bun.Tx, attIDs, hashes []string) ([]string, error) {
	for _, a := range attIDs {
		used, err := tx.NewSelect().Table("messages").Where(containsExpr(tx, "payload"), a).Exists(ctx)
		if err != nil {
			return nil, fmt.Errorf("check attachment %s: %w", a, err)
		}
		if !used {
			if _, err := tx.NewDelete().Table("attachments").Where("id = ?", a).Exec(ctx); err != nil {
				return nil, fmt.Errorf("delete attachment %s: %w", a, err)
			}
		}
	}
	var orphans []string
	for _, h := range hashes {
		inMsgs, err := tx.NewSelect().Table("messages").Where(containsExpr(tx, "payload"), h).Exists(ctx)
		if err != nil {
			return nil, fmt.Errorf("check blob %s: %w", h, err)
		}
		inAtts, err := tx.NewSelect().Table("attachments").Where("sha256 = ?", h).Exists(ctx)
		if err != nil {
			return nil, fmt.Errorf("check blob %s: %w", h, err)
		}
		if !inMsgs && !inAtts {
			orphans = append(orphans, h)
		}
	}
	return orphans, nil
}
