package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/storage"
)

var (
	startupSessions = flag.Int("startup-sessions", 10_000, "BenchmarkStartupLargeHistory: sessions in the data directory")
	startupMB       = flag.Int("startup-mb", 1024, "BenchmarkStartupLargeHistory: MB of history (event log and messages) in the data directory")
)

// fillHistory writes sessions sessions with about mb MB of history into
// the SQLite database of dataDir, one transaction per session (its
// session_created and its messages of 4,000 characters, user and
// assistant in turn), and returns the newest session's id.
func fillHistory(b *testing.B, dataDir string, sessions, mb int) string {
	b.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(dataDir, "foya.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	// A message is stored twice (its event and its projection row).
	const textLen = 4000
	perSession := max(1, mb<<20/(sessions*2*(textLen+200)))
	text := strings.Repeat("history ", textLen/8)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	newest := ""
	for i := range sessions {
		id := fmt.Sprintf("ses_startup_%05d", i)
		meta := core.SessionMeta{ID: id, Title: "session " + id, CreatedAt: base.Add(time.Duration(i) * time.Second)}
		ev, err := core.NewEvent(id, core.EventSessionCreated, core.SessionPayload{Session: meta})
		if err != nil {
			b.Fatal(err)
		}
		evs := []core.Event{ev}
		for j := range perSession {
			role := core.RoleUser
			if j%2 == 1 {
				role = core.RoleAssistant
			}
			m, err := core.NewEvent(id, core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: role, Text: fmt.Sprint(j, " ", text)}})
			if err != nil {
				b.Fatal(err)
			}
			evs = append(evs, m)
		}
		if _, err := db.Append(ctx, id, 0, evs); err != nil {
			b.Fatal(err)
		}
		newest = id
	}
	return newest
}

// BenchmarkStartupLargeHistory measures a kernel's start on a data
// directory holding 10,000 sessions and about 1 GB of history
// (-startup-sessions, -startup-mb scale it): from starting `foya serve`
// to the answer of its first request, the first page of the session list
// (what a client asks first). The database file is in the page cache (it
// was just written); nothing else is warm. "empty" is the same start on a
// new data directory.
func BenchmarkStartupLargeHistory(b *testing.B) {
	b.Run("empty", func(b *testing.B) { benchStartup(b, b.TempDir(), "") })
	b.Run("large", func(b *testing.B) {
		dir := b.TempDir()
		start := time.Now()
		newest := fillHistory(b, dir, *startupSessions, *startupMB)
		fi, err := os.Stat(filepath.Join(dir, "foya.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("data: %d sessions, database file %d MB, written in %v", *startupSessions, fi.Size()>>20, time.Since(start).Round(time.Second))
		benchStartup(b, dir, newest)
	})
}

func benchStartup(b *testing.B, dir, newest string) {
	for b.Loop() {
		k := startKernel(b, dir)
		var out struct {
			Sessions []struct{ ID, Title string }
		}
		k.gql(b, `{ sessions(first: 50) { id title } }`, nil, &out)
		if newest != "" && (len(out.Sessions) != 50 || out.Sessions[0].ID != newest) {
			b.Fatalf("first page: %d sessions, first %+v; want 50 from %s", len(out.Sessions), out.Sessions[:min(1, len(out.Sessions))], newest)
		}
		b.StopTimer()
		k.stop(b)
		b.StartTimer()
	}
}
