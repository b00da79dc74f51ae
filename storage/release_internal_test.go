package storage

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
)

// anonymousMemory is the process's resident anonymous memory once Go has
// collected and handed back its free heap: what is left of the SQLite
// library's allocations (its driver's allocator maps its own pages, and
// its statistics, sqlite3_memory_used, are compiled out) beside Go's live
// heap.
func anonymousMemory(t *testing.T) int64 {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	raw, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		t.Skipf("no /proc/self/smaps_rollup: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "Anonymous:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no Anonymous: in /proc/self/smaps_rollup")
	return 0
}

// TestReleaseMemoryFreesPageCaches: readers that each read a 4 MB history
// hold a page cache each (up to SQLite's 2 MiB); ReleaseMemory, what the
// kernel calls when it goes idle, frees them, and the history reads the
// same afterwards.
func TestReleaseMemoryFreesPageCaches(t *testing.T) {
	ctx := context.Background()
	db := openTempDB(t)
	coretest.CreateSession(t, db, "s")
	text := strings.Repeat("x", 1000)
	var batch []core.Event
	for range 4000 {
		batch = append(batch, coretest.MessageEvent(t, "s", core.RoleUser, text))
		if len(batch) == 500 {
			if _, err := db.Append(ctx, "s", core.AnyHead, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	// Every reader at once, each through the whole history.
	readers := max(4, db.r.DB.Stats().OpenConnections)
	readAll := func() {
		var wg sync.WaitGroup
		errs := make(chan error, readers)
		start := make(chan struct{})
		for range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				msgs, err := db.Messages(ctx, "s", true)
				if err == nil && len(msgs) != 4000 {
					err = fmt.Errorf("%d messages read, want 4000", len(msgs))
				}
				errs <- err
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	readAll()
	held := anonymousMemory(t)
	if err := db.ReleaseMemory(ctx); err != nil {
		t.Fatal(err)
	}
	released := anonymousMemory(t)
	t.Logf("the process's anonymous memory: %.1f MB with the readers' caches full, %.1f MB after ReleaseMemory", float64(held)/(1<<20), float64(released)/(1<<20))
	if held-released < 2<<20 {
		t.Fatalf("ReleaseMemory freed %d bytes of %d; want at least 2 MiB of the page caches", held-released, held)
	}
	readAll()
}
