package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/uptrace/bun/driver/sqliteshim"
)

// openWALTest opens path in WAL mode on one connection, through walVFS
// when wal is set, with SQLite's own checkpoints off (the log keeps every
// frame) and a page cache of cachePages pages (small: transactions spill
// frames before their commit).
func openWALTest(t *testing.T, path string, wal bool, cachePages int) *sql.DB {
	t.Helper()
	if err := registerWALVFS(); err != nil {
		t.Fatal(err)
	}
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=wal_autocheckpoint(0)" +
		"&_pragma=cache_size(" + strconv.Itoa(cachePages) + ")"
	if wal {
		dsn += "&vfs=" + walVFSName
	}
	db, err := sql.Open(sqliteshim.ShimName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	return db
}

// copyFiles copies the database and its WAL (not the shared-memory index)
// into a new directory, as a crash leaves them: opening the copy recovers
// the log from the file alone, checking every frame's checksum, and keeps
// the transactions up to the last whole commit frame.
func copyFiles(t *testing.T, path string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy.db")
	for _, suffix := range []string{"", "-wal"} {
		in, err := os.Open(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(dst + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// digest is the table's rows and the database's integrity check.
func digest(t *testing.T, db *sql.DB) string {
	t.Helper()
	var ok string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil {
		t.Fatal(err)
	}
	var n int
	var sum string
	if err := db.QueryRow("SELECT count(*), coalesce(sum(length(v)), 0) || ':' || coalesce(group_concat(k || '=' || substr(v, 1, 8), ','), '') FROM t").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("integrity %s; %d rows; %s", ok, n, sum)
}

// walWorkload runs the same pseudo-random transactions on db: single-row
// commits, big commits that spill frames before they commit and then
// change the spilled pages again (SQLite overwrites those frames in place
// and rewrites the checksums after them), updates, deletes and rolled-back
// transactions whose frames the next commit writes over.
func walWorkload(t *testing.T, db *sql.DB, seed uint64, steps int, after func(step int)) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed))
	ctx := context.Background()
	key := 0
	for step := range steps {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		kind := r.IntN(10)
		rows := 1
		switch kind {
		case 0, 1:
			rows = 50 + r.IntN(200) // spills with a small cache
		case 2:
			rows = 5
		}
		for range rows {
			key++
			v := strings.Repeat(string(rune('a'+r.IntN(26))), 1+r.IntN(3000))
			if _, err := tx.Exec("INSERT INTO t (k, v) VALUES (?, ?)", key, v); err != nil {
				t.Fatal(err)
			}
		}
		if kind <= 1 { // change the pages spilled earlier in this transaction
			if _, err := tx.Exec("UPDATE t SET v = v || 'x' WHERE k > ? AND k % 3 = 0", key-rows); err != nil {
				t.Fatal(err)
			}
		}
		if kind == 3 && key > 10 {
			if _, err := tx.Exec("DELETE FROM t WHERE k % 7 = ?", r.IntN(7)); err != nil {
				t.Fatal(err)
			}
		}
		if kind == 4 {
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
		} else if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if after != nil {
			after(step)
		}
	}
}

// TestWALVFSWritesTheSameDatabase: the same transactions through walVFS
// and through SQLite's own VFS leave the same rows and a sound database,
// and at every commit the files on disk alone (a crash's copy, the log
// recovered from its checksums) hold every committed transaction — the
// frames are in the file before the commit returns.
func TestWALVFSWritesTheSameDatabase(t *testing.T) {
	dir := t.TempDir()
	plain := openWALTest(t, filepath.Join(dir, "plain.db"), false, 20)
	walPath := filepath.Join(dir, "wal.db")
	wal := openWALTest(t, walPath, true, 20)
	const steps = 120
	walWorkload(t, plain, 7, steps, nil)
	walWorkload(t, wal, 7, steps, func(step int) {
		if step%17 != 0 && step != steps-1 {
			return
		}
		crashed := openWALTest(t, copyFiles(t, walPath), false, 2000)
		if got, want := digest(t, crashed), digest(t, wal); got != want {
			t.Fatalf("after step %d a crash's copy reads\n%.200s\nbut the database reads\n%.200s", step, got, want)
		}
		crashed.Close()
	})
	if got, want := digest(t, wal), digest(t, plain); got != want {
		t.Fatalf("through walVFS the database reads\n%.200s\nthrough SQLite's VFS\n%.200s", got, want)
	}
	if !strings.HasPrefix(digest(t, wal), "integrity ok;") {
		t.Fatalf("integrity: %s", digest(t, wal))
	}
}

// TestWALVFSOneWritePerCommit: a commit of a few pages is one write system
// call through walVFS, where SQLite's VFS makes two for every page (the
// frame's header, then the page).
func TestWALVFSOneWritePerCommit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts write calls in /proc/self/io")
	}
	writes := func(wal bool) float64 {
		db := openWALTest(t, filepath.Join(t.TempDir(), "w.db"), wal, 2000)
		if _, err := db.Exec("CREATE INDEX IF NOT EXISTS t_v ON t (v)"); err != nil {
			t.Fatal(err)
		}
		const commits = 200
		before := syscw(t)
		for i := range commits {
			if _, err := db.Exec("INSERT INTO t (k, v) VALUES (?, ?)", i+1, fmt.Sprintf("row %d", i)); err != nil {
				t.Fatal(err)
			}
		}
		return float64(syscw(t)-before) / commits
	}
	plain, wal := writes(false), writes(true)
	t.Logf("write calls per commit: SQLite's VFS %.2f, walVFS %.2f", plain, wal)
	if plain < 3.5 {
		t.Fatalf("SQLite's VFS made %.2f write calls per commit of two or more pages; expected 4 or more", plain)
	}
	if wal > 1.5 {
		t.Fatalf("walVFS made %.2f write calls per commit; expected one", wal)
	}
}

// syscw is the process's count of write system calls so far.
func syscw(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no syscw in /proc/self/io")
	return 0
}

// TestWALVFSHoldsTheDatabase: while a kernel's store is open, another
// process cannot read foya.db (SQLite reports it locked); once it is
// closed, it can.
func TestWALVFSHoldsTheDatabase(t *testing.T) {
	if path := os.Getenv("FOYA_WALVFS_PEEK"); path != "" {
		db, err := sql.Open(sqliteshim.ShimName, "file:"+path+"?_pragma=busy_timeout(100)")
		if err == nil {
			var n int
			err = db.QueryRow("SELECT count(*) FROM sessions").Scan(&n)
			db.Close()
		}
		fmt.Printf("PEEK %v\n", err)
		return
	}
	if runtime.GOOS == "windows" {
		t.Skip("unix-excl is a unix VFS")
	}
	path := filepath.Join(t.TempDir(), "foya.db")
	peek := func() string {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run", "^TestWALVFSHoldsTheDatabase$", "-test.count", "1")
		cmd.Env = append(os.Environ(), "FOYA_WALVFS_PEEK="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("peek: %v\n%s", err, out)
		}
		for line := range strings.SplitSeq(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "PEEK "); ok {
				return v
			}
		}
		t.Fatalf("peek printed no result:\n%s", out)
		return ""
	}
	db, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := peek(); !strings.Contains(got, "locked") {
		db.Close()
		t.Fatalf("another process read the open database: %s", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := peek(); got != "<nil>" {
		t.Fatalf("another process could not read the closed database: %s", got)
	}
}

// TestWALVFSSurvivesAKill: a kernel killed (SIGKILL) right after its
// commits returned leaves them all in the files; the next open recovers
// the log and reads every one.
func TestWALVFSSurvivesAKill(t *testing.T) {
	const appends = 300
	if path := os.Getenv("FOYA_WALVFS_KILL"); path != "" {
		ctx := context.Background()
		db, err := Open(ctx, path, nil)
		if err != nil {
			fmt.Println("OPEN", err)
			os.Exit(3)
		}
		coretest.CreateSession(t, db, "s")
		for i := range appends {
			if _, err := db.Append(ctx, "s", core.AnyHead, []core.Event{coretest.MessageEvent(t, "s", core.RoleUser, fmt.Sprintf("message %d", i))}); err != nil {
				fmt.Println("APPEND", err)
				os.Exit(3)
			}
		}
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	if runtime.GOOS == "windows" {
		t.Skip("SIGKILL")
	}
	path := filepath.Join(t.TempDir(), "foya.db")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestWALVFSSurvivesAKill$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "FOYA_WALVFS_KILL="+path)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was to kill itself after its appends: %v\n%s", err, out)
	}
	ctx := context.Background()
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	head, err := db.HeadSeq(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if head != appends+1 {
		t.Fatalf("after the kill the session's head is %d, want %d", head, appends+1)
	}
	evs, err := db.Events(ctx, "s", appends-1, 10)
	if err != nil || len(evs) != 2 {
		t.Fatalf("last events: %v %v", evs, err)
	}
	var last core.MessagePayload
	if err := evs[1].Decode(&last); err != nil || last.Message.Text != fmt.Sprintf("message %d", appends-1) {
		t.Fatalf("last message %+v %v", last, err)
	}
}

// TestWALVFSSyncsData: a checkpoint syncs the log and the database file
// with fdatasync (syncData), and what it synced reads back after a
// reopen.
func TestWALVFSSyncsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "foya.db")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	coretest.CreateSession(t, db, "s")
	appendSome := func() {
		t.Helper()
		for i := range 100 {
			if _, err := db.Append(ctx, "s", core.AnyHead, []core.Event{coretest.MessageEvent(t, "s", core.RoleUser, fmt.Sprintf("message %d", i))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The first sync of a new log also syncs its directory, with
	// SQLite's own xSync: count from the second round on.
	appendSome()
	if _, _, err := db.ckpt.restart(ctx); err != nil {
		t.Fatal(err)
	}
	wal, file := walVFS.walSyncs.Load(), walVFS.dbSyncs.Load()
	appendSome()
	logged, copied, err := db.ckpt.restart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if copied != logged {
		t.Fatalf("the checkpoint copied %d of %d pages; want all", copied, logged)
	}
	if n := walVFS.walSyncs.Load() - wal; n < 1 {
		t.Errorf("the checkpoints synced the log with fdatasync %d times; want 1 or more", n)
	}
	if n := walVFS.dbSyncs.Load() - file; n < 1 {
		t.Errorf("the checkpoints synced the database file with fdatasync %d times; want 1 or more", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if head, err := db.HeadSeq(ctx, "s"); err != nil || head != 201 {
		t.Fatalf("head %d %v after a reopen, want 201", head, err)
	}
}
