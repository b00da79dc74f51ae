package storage

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
)

// A database written before the events and messages tables became rowid
// tables keeps every event and message across the migration, and the
// (session_id, seq) keys stay unique.
func TestMigrationRowidEventsKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "foya.db")
	d, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Back to the layout before the migration.
	for _, q := range []string{
		`DROP TABLE events`,
		`DROP TABLE messages`,
		`CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, payload TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID`,
		`CREATE INDEX events_session_type ON events (session_id, type, seq)`,
		`CREATE TABLE messages (session_id TEXT NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL, payload TEXT NOT NULL, active INTEGER NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID`,
		`DELETE FROM bun_migrations WHERE name = '20261201040000'`,
	} {
		if _, err := d.w.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	coretest.CreateSession(t, d, "s")
	long := strings.Repeat("a long reply ", 2000) // spills to overflow pages
	for _, text := range []string{"hello", long, "bye"} {
		if _, err := d.Append(ctx, "s", core.AnyHead, []core.Event{coretest.MessageEvent(t, "s", core.RoleUser, text)}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := d.Events(ctx, "s", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()

	d, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, table := range []string{"events", "messages"} {
		var sql string
		if err := d.w.NewRaw(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(ctx, &sql); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.ToUpper(sql), "WITHOUT ROWID") {
			t.Fatalf("%s is still a WITHOUT ROWID table: %s", table, sql)
		}
	}
	after, err := d.Events(ctx, "s", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) || len(after) != 4 {
		t.Fatalf("events: %d before, %d after", len(before), len(after))
	}
	for i := range after {
		if after[i].Seq != before[i].Seq || after[i].Type != before[i].Type || string(after[i].Payload) != string(before[i].Payload) {
			t.Fatalf("event %d differs after the migration", i)
		}
	}
	msgs, err := d.Messages(ctx, "s", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[1].Text != long {
		t.Fatalf("messages after the migration: %d", len(msgs))
	}
	for _, q := range []string{
		`INSERT INTO events (session_id, seq, type, payload, at) VALUES ('s', 2, 'x', '{}', '')`,
		`INSERT INTO messages (session_id, seq, role, payload, active) VALUES ('s', 2, 'user', '{}', 1)`,
	} {
		if _, err := d.w.ExecContext(ctx, q); err == nil || !isUniqueViolation(err) {
			t.Fatalf("%s: want a unique violation, got %v", q, err)
		}
	}
	// Appends go on where the session was.
	out, err := d.Append(ctx, "s", 4, []core.Event{coretest.MessageEvent(t, "s", core.RoleAssistant, "more")})
	if err != nil || out[0].Seq != 5 {
		t.Fatalf("append after the migration: %v, %v", out, err)
	}
}
