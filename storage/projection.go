package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

// apply updates the projections that ev affects. It runs inside the
// transaction that appends ev, and again, in order, when projections are
// rebuilt from the log; it must depend on nothing but the event and the
// projection rows written by earlier events.
//
// The common append on SQLite does not call apply (rawappend.go): an event
// type given a projection here must also be sent to the general path by
// fastAppendable.
func apply(ctx context.Context, db bun.IDB, ev core.Event) error {
	switch ev.Type {
	case core.EventSessionCreated:
		row, err := sessionRowOf(ev)
		if err != nil {
			return err
		}
		if _, err := db.NewInsert().Model(&row).Exec(ctx); err != nil {
			return fmt.Errorf("insert session %s: %w", ev.SessionID, err)
		}
	case core.EventSessionUpdated:
		p, meta, err := sessionMeta(ev)
		if err != nil {
			return err
		}
		if _, err := db.NewUpdate().Table("sessions").
			Set("meta = ?", string(meta)).
			Set("project_id = ?", nullable(p.Session.ProjectID)).
			Set("connection_id = ?", nullable(p.Session.ConnectionID)).
			Where("id = ?", ev.SessionID).Exec(ctx); err != nil {
			return fmt.Errorf("update session %s: %w", ev.SessionID, err)
		}
	case core.EventPhaseChanged:
		var p core.PhasePayload
		if err := ev.Decode(&p); err != nil {
			return err
		}
		if _, err := db.NewUpdate().Table("sessions").Set("phase = ?", string(p.Phase)).
			Where("id = ?", ev.SessionID).Exec(ctx); err != nil {
			return fmt.Errorf("update phase of session %s: %w", ev.SessionID, err)
		}
	case core.EventMessageEnd, core.EventMessageImported:
		row, err := messageRowOf(ev)
		if err != nil {
			return err
		}
		if _, err := db.NewInsert().Model(&row).Exec(ctx); err != nil {
			return fmt.Errorf("insert message %d of session %s: %w", ev.Seq, ev.SessionID, err)
		}
	case core.EventHistoryRewound:
		var p core.RewindPayload
		if err := ev.Decode(&p); err != nil {
			return err
		}
		if _, err := db.NewUpdate().Table("messages").Set("active = ?", false).
			Where("session_id = ? AND seq >= ? AND active = ?", ev.SessionID, p.FromSeq, true).Exec(ctx); err != nil {
			return fmt.Errorf("rewind session %s: %w", ev.SessionID, err)
		}
	}
	return nil
}

// isMessage reports whether ev adds a row to the messages projection.
func isMessage(ev core.Event) bool {
	return ev.Type == core.EventMessageEnd || ev.Type == core.EventMessageImported
}

// messageRowOf is the messages projection row of a message event: the
// payload's message as it is in the event (a message payload holds nothing
// else; Seq and Active are not part of it), with its role checked. Only the
// role is decoded: decoding the whole message and encoding it again was a
// sixth of a batched append's CPU.
func messageRowOf(ev core.Event) (messageRow, error) {
	raw, role, err := messageJSON(ev)
	if err != nil {
		return messageRow{}, err
	}
	if !role.Valid() {
		return messageRow{}, core.Errorf(core.CodeBadInput, "message event has unknown role %q", role)
	}
	return messageRow{SessionID: ev.SessionID, Seq: ev.Seq, Role: string(role), Payload: string(raw), Active: true}, nil
}

// messageJSON returns the message of a message event's payload and its
// role. A payload as core.NewEvent writes it ({"message":{"role":"…",…}})
// is cut and checked in one pass: when what lies between {"message": and
// the last } is one valid JSON value, it is the message (any other key of
// the payload would make it invalid). Any other payload is decoded.
func messageJSON(ev core.Event) (json.RawMessage, core.Role, error) {
	const prefix, rolePrefix = `{"message":`, `{"message":{"role":"`
	p := ev.PayloadJSON()
	if rest, ok := bytes.CutPrefix(p, []byte(rolePrefix)); ok && p[len(p)-1] == '}' {
		msg := p[len(prefix) : len(p)-1]
		if end := bytes.IndexByte(rest, '"'); end > 0 && bytes.IndexByte(rest[:end], '\\') < 0 && json.Valid(msg) {
			return json.RawMessage(msg), core.Role(rest[:end]), nil
		}
	}
	var outer struct {
		Message json.RawMessage `json:"message"`
	}
	if err := ev.Decode(&outer); err != nil {
		return nil, "", err
	}
	var m struct {
		Role core.Role `json:"role"`
	}
	if len(outer.Message) > 0 {
		if err := json.Unmarshal(outer.Message, &m); err != nil {
			return nil, "", fmt.Errorf("decode message of %s event %d: %w", ev.Type, ev.Seq, err)
		}
	}
	return outer.Message, m.Role, nil
}

// sessionMeta decodes a session event and re-encodes its metadata for the
// meta column.
func sessionMeta(ev core.Event) (core.SessionPayload, []byte, error) {
	var p core.SessionPayload
	if err := ev.Decode(&p); err != nil {
		return p, nil, err
	}
	meta, err := json.Marshal(p.Session)
	if err != nil {
		return p, nil, fmt.Errorf("encode session meta: %w", err)
	}
	return p, meta, nil
}

// sessionRowOf is the row that session_created event ev adds to the
// sessions projection.
func sessionRowOf(ev core.Event) (sessionRow, error) {
	p, meta, err := sessionMeta(ev)
	if err != nil {
		return sessionRow{}, err
	}
	return sessionRow{
		ID: ev.SessionID, ParentID: p.Session.ParentID, ProjectID: p.Session.ProjectID,
		ConnectionID: p.Session.ConnectionID, Phase: string(core.PhaseIdle), HeadSeq: ev.Seq,
		Meta: string(meta), CreatedAt: fmtTime(p.Session.CreatedAt), UpdatedAt: fmtTime(ev.At),
	}, nil
}

// touch records the session's new head after a batch of events, and its
// phase when the batch changed it (phase not empty).
func touch(ctx context.Context, db bun.IDB, last core.Event, phase string) error {
	q := db.NewUpdate().Table("sessions").
		Set("head_seq = ?", last.Seq).Set("updated_at = ?", fmtTime(last.At))
	if phase != "" {
		q = q.Set("phase = ?", phase)
	}
	if _, err := q.Where("id = ?", last.SessionID).Exec(ctx); err != nil {
		return fmt.Errorf("update head of session %s: %w", last.SessionID, err)
	}
	return nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// RebuildProjections drops the sessions and messages projections and
// rebuilds them by replaying every event in order, in one transaction.
func (d *DB) RebuildProjections(ctx context.Context) (events int, err error) {
	err = d.w.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewDelete().Table("messages").Where("1 = 1").Exec(ctx); err != nil {
			return fmt.Errorf("clear messages: %w", err)
		}
		if _, err := tx.NewDelete().Table("sessions").Where("1 = 1").Exec(ctx); err != nil {
			return fmt.Errorf("clear sessions: %w", err)
		}
		var ids []string
		if err := tx.NewSelect().Table("events").ColumnExpr("DISTINCT session_id").Scan(ctx, &ids); err != nil {
			return fmt.Errorf("list sessions in log: %w", err)
		}
		for _, id := range ids {
			var after int64
			for {
				var rows []eventRow
				if err := tx.NewSelect().Model(&rows).Where("session_id = ? AND seq > ?", id, after).
					Order("seq").Limit(1000).Scan(ctx); err != nil {
					return fmt.Errorf("read events of %s: %w", id, err)
				}
				if len(rows) == 0 {
					break
				}
				var last core.Event
				for _, r := range rows {
					ev, err := r.event()
					if err != nil {
						return err
					}
					if err := apply(ctx, tx, ev); err != nil {
						return err
					}
					last = ev
					events++
				}
				if err := touch(ctx, tx, last, ""); err != nil {
					return err
				}
				after = last.Seq
			}
		}
		// The ledger is not a projection (it outlives its sessions): the
		// rows written anew take their totals from it.
		if _, err := tx.ExecContext(ctx, sqlSessionUsageFromLedger); err != nil {
			return fmt.Errorf("sum the sessions' usage: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("rebuild projections: %w", err)
	}
	return events, nil
}
