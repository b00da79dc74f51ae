package storage

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

// Session implements core.SessionStore. It is the session list's query
// for one id (sessionSelect), through the same statements prepared once on
// the SQLite readers: every sendMessage, subscription and turn start reads
// its session, and bun's query building, SQLite's parsing of the text and
// bun's model scan were most of a read's cost.
func (d *DB) Session(ctx context.Context, id string) (core.Session, error) {
	query := sessionByIDSQL
	if d.pg {
		query = sessionByIDSQLPG
	}
	if err := ctx.Err(); err != nil {
		return core.Session{}, fmt.Errorf("read session %s: %w", id, err)
	}
	// One row by its key, in microseconds: without the caller's
	// cancellation, which database/sql and the SQLite driver would each
	// watch with a goroutine of their own for the statement (two
	// goroutines, and a wake-up of another CPU, a read).
	rows, err := d.listQuery(context.WithoutCancel(ctx), query, noNUL(id))
	if err != nil {
		return core.Session{}, fmt.Errorf("read session %s: %w", id, err)
	}
	out, err := scanSessions(rows, nil, 1, true, !d.pg)
	if err != nil {
		return core.Session{}, fmt.Errorf("read session %s: %w", id, err)
	}
	if len(out) == 0 {
		return core.Session{}, core.Errorf(core.CodeNotFound, "session %s not found", id)
	}
	return out[0], nil
}

// listQuery runs a query of the session list: on SQLite through its
// statement prepared once and kept (listStmts), on PostgreSQL as it is.
func (d *DB) listQuery(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if d.pg {
		return d.r.DB.QueryContext(ctx, query, args...)
	}
	st, err := d.list.stmt(ctx, d.r.DB, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// Sessions implements core.SessionStore; newest first.
//
// A page is one query with bound parameters (on SQLite a statement
// prepared once per shape of filter and kept, see listStmt), scanned
// with database/sql into the four columns a session is made of; the
// metadata is decoded by decodeMeta. bun's model scanning and
// encoding/json were each half of the CPU of walking 10,000 sessions.
func (d *DB) Sessions(ctx context.Context, f core.SessionFilter) ([]core.Session, error) {
	query, args := sessionsSQL(f, d.pg)
	var rows *sql.Rows
	var err error
	if len(f.ParentIDs) > 0 {
		// (a list of parents is a statement of its own for every length:
		// not kept)
		rows, err = d.r.DB.QueryContext(ctx, query, args...)
	} else {
		rows, err = d.listQuery(ctx, query, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []core.Session
	if f.IDsOnly {
		out, err = scanIDs(rows, f.First)
	} else {
		out, err = scanSessions(rows, f.Into, f.First, f.Usage, !d.pg)
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	if len(out) == 0 && f.After != "" {
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
	return out, nil
}

// sessionsSQL is the query of Sessions for f and its arguments, with ?
// placeholders ($n on PostgreSQL). Literals that decide which partial
// index serves the page (parent_id IS NULL, phase <> 'idle') stay in the
// text: SQLite uses a partial index only when the query's own terms imply
// its condition.
func sessionsSQL(f core.SessionFilter, pg bool) (string, []any) {
	var b strings.Builder
	var args []any
	if f.IDsOnly {
		// The list's indexes hold the id: no row is read.
		b.WriteString("SELECT id FROM sessions")
	} else {
		b.WriteString(sessionSelect(pg, f.Usage))
	}
	and := " WHERE "
	cond := func(c string, a ...any) {
		b.WriteString(and)
		and = " AND "
		for _, part := range strings.SplitAfter(c, "?") {
			if !strings.HasSuffix(part, "?") {
				b.WriteString(part)
				continue
			}
			b.WriteString(part[:len(part)-1])
			args = append(args, a[0])
			a = a[1:]
			if pg {
				b.WriteString("$" + strconv.Itoa(len(args)))
			} else {
				b.WriteString("?")
			}
		}
	}
	switch {
	case f.ParentID != "":
		cond("parent_id = ?", noNUL(f.ParentID))
	case len(f.ParentIDs) > 0:
		ids := make([]any, len(f.ParentIDs))
		for i, id := range f.ParentIDs {
			ids[i] = noNUL(id)
		}
		cond("parent_id IN (?"+strings.Repeat(", ?", len(ids)-1)+")", ids...)
	case !f.IncludeChildren:
		cond("parent_id IS NULL")
	}
	if f.ProjectID != "" {
		cond("project_id = ?", noNUL(f.ProjectID))
	}
	if f.ConnectionID != "" {
		cond("connection_id = ?", noNUL(f.ConnectionID))
	}
	if f.NotIdle {
		cond("phase <> '" + string(core.PhaseIdle) + "'")
	}
	if f.After != "" {
		// The cursor's creation time is read in the same query (one
		// round trip a page on PostgreSQL); created_at <= bounds the walk
		// of the (created_at DESC, id) index, the OR alone would make it
		// start from the newest.
		const at = "(SELECT created_at FROM sessions WHERE id = ?)"
		after := noNUL(f.After)
		cond("created_at <= "+at+" AND (created_at < "+at+" OR id > ?)", after, after, after)
	}
	b.WriteString(" ORDER BY created_at DESC, id")
	if f.First > 0 {
		b.WriteString(" LIMIT " + strconv.Itoa(f.First))
	}
	return b.String(), args
}

// sessionSelect is the SELECT of the session list and of Session: the
// columns scanSessions reads, from sessions (the usage totals last, when
// usage is set).
//
// On SQLite a row comes as two values (and the usage totals when asked),
// so that listing it allocates twice (the BLOB and its slice header),
// where a column each cost six allocations a row
// (BenchmarkSessionList10k):
//   - the head, the time and the metadata as one BLOB, "<head> <time>{…}"
//     (CAST … AS BLOB reinterprets the text's bytes, nothing is
//     converted). The SQLite driver returns a text value as a Go string
//     made of two copies of it, and looks the column's declared type up
//     for each; a BLOB is one copy, which database/sql hands to a
//     sql.RawBytes as it is, and which scanSessions splits and decodes in
//     place. An integer over 255 is boxed in an allocation of its own.
//   - the phase as its number in phaseCodes (a BLOB of its name for a
//     phase not there), which the driver boxes without allocating.
//
// The kernel collects its garbage twice as often as Go's default, so what
// a page allocates costs it more than it would elsewhere. PostgreSQL reads
// the columns as they are.
// A live row's head and time are its last event's (see rawTx.append);
// PostgreSQL never has one.
func sessionSelect(pg, usage bool) string {
	extra := ""
	if usage {
		extra = ", " + sessionUsageColumns
	}
	if pg {
		return "SELECT meta, phase, head_seq, updated_at" + extra + " FROM sessions"
	}
	return "SELECT CAST((CASE WHEN head_live = 0 THEN head_seq ELSE (SELECT MAX(seq) FROM events WHERE session_id = sessions.id) END) || ' ' || " +
		"(CASE WHEN head_live = 0 THEN updated_at ELSE (SELECT at FROM events WHERE session_id = sessions.id ORDER BY seq DESC LIMIT 1) END) || meta AS BLOB), " +
		sqlPhaseCode + extra + " FROM sessions"
}

// phaseCodes are the phases the session list reads as numbers on SQLite
// (their index here; see sessionSelect), and sqlPhaseCode the expression
// that reads them.
var (
	phaseCodes   = [...]core.Phase{core.PhaseIdle, core.PhaseTurn, core.PhaseCompaction}
	sqlPhaseCode = func() string {
		var b strings.Builder
		b.WriteString("CASE phase")
		for i, p := range phaseCodes {
			fmt.Fprintf(&b, " WHEN '%s' THEN %d", p, i)
		}
		b.WriteString(" ELSE CAST(phase AS BLOB) END")
		return b.String()
	}()
)

// Session's query, on SQLite and on PostgreSQL.
var (
	sessionByIDSQL   = sessionSelect(false, true) + " WHERE id = ?"
	sessionByIDSQLPG = sessionSelect(true, true) + " WHERE id = $1"
)

// scanSessions reads the rows of sessionSelect (with the usage totals when
// usage is set) and closes them. With blobs (SQLite) the head, the time and
// the metadata come as one BLOB and the phase as its code (see
// sessionSelect): database/sql hands the driver's own slice of a BLOB to a
// sql.RawBytes, and the SQLite driver (modernc.org/sqlite's columnBlob)
// makes a new slice for every value and never writes to it again, so the
// metadata's string is that slice itself, without a copy, and the
// session's strings point into it as they would into a copied string.
// TestSessionListOwnsItsStrings fails if a driver version reuses the
// slice. The sessions go into into's array when it holds capacity
// (core.SessionFilter.Into).
func scanSessions(rows *sql.Rows, into []core.Session, capacity int, usage, blobs bool) (out []core.Session, err error) {
	defer func() { err = errors.Join(err, rows.Close()) }()
	if capacity = min(max(capacity, 0), 1000); cap(into) >= capacity && capacity > 0 {
		out = into[:0]
	} else {
		out = make([]core.Session, 0, capacity)
	}
	var meta, phase string
	var metaRaw sql.RawBytes // blobs: the head, the time and the metadata
	var phaseCode any
	var head int64
	var updated sql.RawBytes
	var u usageSums
	dest := []any{&meta, &phase, &head, &updated}
	if blobs {
		dest = []any{&metaRaw, &phaseCode}
	}
	if usage {
		dest = append(dest, u.sums()...)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if blobs {
			if head, updated, metaRaw, err = splitSessionRow(metaRaw); err != nil {
				return nil, err
			}
			meta = unsafe.String(unsafe.SliceData(metaRaw), len(metaRaw))
			if phase, err = codedPhase(phaseCode); err != nil {
				return nil, err
			}
		}
		out = append(out, core.Session{Phase: core.Phase(phase), HeadSeq: head})
		s := &out[len(out)-1]
		if usage {
			totals := u.usage()
			s.UsageTotals = &totals
		}
		if err := decodeMeta(meta, &s.SessionMeta); err != nil {
			return nil, fmt.Errorf("decode a session's metadata: %w", err)
		}
		if s.UpdatedAt, err = parseTimeBytes(updated); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}

// splitSessionRow splits the BLOB sessionSelect reads on SQLite,
// "<head> <time>{…}", into the head, the time and the metadata's JSON
// object (slices of row).
func splitSessionRow(row []byte) (head int64, updated, meta []byte, err error) {
	sp := bytes.IndexByte(row, ' ')
	brace := bytes.IndexByte(row, '{') // neither the head nor a time has one
	if sp <= 0 || brace < sp {
		return 0, nil, nil, fmt.Errorf("read a session's row: not \"<head> <time>{…}\": %.40q", row)
	}
	if head, err = strconv.ParseInt(string(row[:sp]), 10, 64); err != nil || head < 0 {
		return 0, nil, nil, fmt.Errorf("read a session's row: head %q", row[:sp])
	}
	return head, row[sp+1 : brace], row[brace:], nil
}

// codedPhase is the phase sqlPhaseCode read: its number in phaseCodes, or
// the name of one not there.
func codedPhase(v any) (string, error) {
	switch v := v.(type) {
	case int64:
		if v >= 0 && v < int64(len(phaseCodes)) {
			return string(phaseCodes[v]), nil
		}
	case []byte:
		return string(v), nil
	}
	return "", fmt.Errorf("read a session's phase: unexpected %T %v", v, v)
}

// scanIDs reads the rows of a list of ids (SessionFilter.IDsOnly) and
// closes them.
func scanIDs(rows *sql.Rows, capacity int) (out []core.Session, err error) {
	defer func() { err = errors.Join(err, rows.Close()) }()
	out = make([]core.Session, 0, min(max(capacity, 0), 1000))
	var id string
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, core.Session{SessionMeta: core.SessionMeta{ID: id}})
	}
	return out, rows.Err()
}

// listStmts are the statements of the session list prepared on the
// SQLite readers, by query text (a few dozen shapes at most: the
// combinations of SessionFilter's fields).
type listStmts struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func (l *listStmts) stmt(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	l.mu.Lock()
	st, ok := l.m[query]
	l.mu.Unlock()
	if ok {
		return st, nil
	}
	// Prepared without the lock (it takes a connection of the pool); the
	// first of two that raced is kept.
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if kept, ok := l.m[query]; ok {
		st.Close()
		return kept, nil
	}
	if l.m == nil {
		l.m = map[string]*sql.Stmt{}
	}
	l.m[query] = st
	return st, nil
}

func (l *listStmts) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, st := range l.m {
		errs = append(errs, st.Close())
	}
	l.m = nil
	return errors.Join(errs...)
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
// other sessions — e.g. a fork — attachment records and the terminal_exited
// events of other sessions keep theirs).
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
		termHashes, err := terminalOutputHashes(ctx, tx, out.IDs)
		if err != nil {
			return err
		}
		hashes = mergeHashes(hashes, termHashes)
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
		orphans, err := dropUnreferenced(ctx, tx, attIDs, hashes)
		if err != nil {
			return err
		}
		out.OrphanBlobs, err = keepTerminalOutputs(ctx, tx, orphans)
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
