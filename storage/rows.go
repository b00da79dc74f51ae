package storage

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

// Times are stored as RFC 3339 text with nanoseconds in UTC so that they
// sort as text and round-trip exactly.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", s, err)
	}
	return t, nil
}

// parseTimeBytes is parseTime of b; the layout fmtTime writes (always
// UTC) is read directly, without time.Parse's general parser.
func parseTimeBytes(b []byte) (time.Time, error) {
	if len(b) == len(timeLayout)-len("Z07:00")+1 && b[4] == '-' && b[7] == '-' && b[10] == 'T' &&
		b[13] == ':' && b[16] == ':' && b[19] == '.' && b[29] == 'Z' {
		num := func(s []byte) (int, bool) {
			n := 0
			for _, c := range s {
				if c < '0' || c > '9' {
					return 0, false
				}
				n = n*10 + int(c-'0')
			}
			return n, true
		}
		y, ok1 := num(b[0:4])
		mo, ok2 := num(b[5:7])
		d, ok3 := num(b[8:10])
		h, ok4 := num(b[11:13])
		mi, ok5 := num(b[14:16])
		s, ok6 := num(b[17:19])
		ns, ok7 := num(b[20:29])
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 &&
			mo >= 1 && mo <= 12 && d >= 1 && h < 24 && mi < 60 && s < 60 {
			if t := time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC); t.Day() == d {
				return t, nil // (a day past the month's end is normalised: time.Parse's error below)
			}
		}
	}
	return parseTime(string(b))
}

type eventRow struct {
	bun.BaseModel `bun:"table:events"`

	SessionID string `bun:"session_id,pk"`
	Seq       int64  `bun:"seq,pk"`
	Type      string `bun:"type,notnull"`
	Payload   string `bun:"payload,notnull"`
	At        string `bun:"at,notnull"`
}

func toEventRow(e core.Event) eventRow {
	return eventRow{SessionID: e.SessionID, Seq: e.Seq, Type: string(e.Type), Payload: string(e.Payload), At: fmtTime(e.At)}
}

func (r eventRow) event() (core.Event, error) {
	at, err := parseTime(r.At)
	if err != nil {
		return core.Event{}, err
	}
	return core.Event{SessionID: r.SessionID, Seq: r.Seq, Type: core.EventType(r.Type), At: at, Payload: json.RawMessage(r.Payload)}, nil
}

type sessionRow struct {
	bun.BaseModel `bun:"table:sessions"`

	ID           string `bun:"id,pk"`
	ParentID     string `bun:"parent_id,nullzero"`
	ProjectID    string `bun:"project_id,nullzero"`
	ConnectionID string `bun:"connection_id,nullzero"`
	Phase        string `bun:"phase,notnull"`
	HeadSeq      int64  `bun:"head_seq,notnull"`
	Meta         string `bun:"meta,notnull"`
	CreatedAt    string `bun:"created_at,notnull"`
	UpdatedAt    string `bun:"updated_at,notnull"`
	// HeadLive: HeadSeq and UpdatedAt may be behind the events, which
	// say what they are (see rawTx.append).
	HeadLive int64 `bun:"head_live,notnull"`
}

type messageRow struct {
	bun.BaseModel `bun:"table:messages"`

	SessionID string `bun:"session_id,pk"`
	Seq       int64  `bun:"seq,pk"`
	Role      string `bun:"role,notnull"`
	Payload   string `bun:"payload,notnull"`
	Active    bool   `bun:"active,notnull"`
}

func (r messageRow) message() (core.Message, error) {
	var m core.Message
	if err := json.Unmarshal([]byte(r.Payload), &m); err != nil {
		return core.Message{}, fmt.Errorf("decode message %d of session %s: %w", r.Seq, r.SessionID, err)
	}
	m.Seq = r.Seq
	m.Active = r.Active
	return m, nil
}

type projectRow struct {
	bun.BaseModel `bun:"table:projects"`

	ID        string `bun:"id,pk"`
	Name      string `bun:"name,notnull"`
	Path      string `bun:"path,notnull"`
	CreatedAt string `bun:"created_at,notnull"`
}

func (r projectRow) project() (core.Project, error) {
	at, err := parseTime(r.CreatedAt)
	if err != nil {
		return core.Project{}, err
	}
	return core.Project{ID: r.ID, Name: r.Name, Path: r.Path, CreatedAt: at}, nil
}

type tombstoneRow struct {
	bun.BaseModel `bun:"table:tombstones"`

	SessionID string `bun:"session_id,pk"`
	DeletedAt string `bun:"deleted_at,notnull"`
}

// mapRows converts rows to domain values, stopping at the first error.
func mapRows[R, T any](rows []R, conv func(R) (T, error)) ([]T, error) {
	out := make([]T, len(rows))
	for i, r := range rows {
		v, err := conv(r)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
