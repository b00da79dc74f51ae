package memtrim

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// selfSmaps is the path of this process's executable and its smaps.
func selfSmaps(t *testing.T) (exe string, smaps []byte) {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	smaps, err = os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	return exe, smaps
}

// exeResident sums the resident bytes of the executable's clean read-only
// mappings.
func exeResident(t *testing.T) int64 {
	t.Helper()
	exe, raw := selfSmaps(t)
	var n int64
	for _, m := range parseSmaps(raw) {
		if m.path == strings.TrimSuffix(exe, " (deleted)") && m.perms[1] == '-' {
			n += m.rss
		}
	}
	return n
}

// TestTrimDropsExecutablePages checks that TrimAll drops the resident
// pages of the executable's read-only mappings and that the process keeps
// running code from them afterwards (it faults them back in).
func TestTrimDropsExecutablePages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("executable pages are only dropped on Linux")
	}
	before := exeResident(t)
	st, err := TrimAll()
	if err != nil {
		t.Fatal(err)
	}
	after := exeResident(t)
	t.Logf("executable resident before %d KiB, dropped %d KiB, after %d KiB", before>>10, st.FileBytes>>10, after>>10)
	if st.FileBytes == 0 || after >= before {
		t.Fatalf("nothing dropped: before %d, after %d, reported %d", before, after, st.FileBytes)
	}
	// Code and read-only data of the whole program still work.
	for range 3 {
		runtime.GC()
		if _, err := Trim(); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Repeat("ab", 3); got != "ababab" {
		t.Fatal(got)
	}
}

func TestParseSmaps(t *testing.T) {
	raw := []byte(`00400000-00401000 r--p 00000000 fe:00 1 /bin/foya
Rss:                   4 kB
Anonymous:             0 kB
00402000-012e8000 r-xp 00002000 fe:00 1 /bin/foya (deleted)
Rss:                3064 kB
Anonymous:             8 kB
7f0d8826d000-7f0d8837d000 rw-p 00000000 00:00 0
Rss:                 572 kB
VmFlags: rd wr mr mw me ac sd
`)
	ms := parseSmaps(raw)
	if len(ms) != 3 {
		t.Fatalf("got %d mappings: %+v", len(ms), ms)
	}
	if ms[0].start != 0x400000 || ms[0].end != 0x401000 || ms[0].perms != "r--p" || ms[0].path != "/bin/foya" || ms[0].rss != 4<<10 {
		t.Errorf("first: %+v", ms[0])
	}
	if ms[1].path != "/bin/foya (deleted)" || ms[1].anonymous != 8<<10 || ms[1].rss != 3064<<10 {
		t.Errorf("second: %+v", ms[1])
	}
	if ms[2].path != "" || ms[2].rss != 572<<10 {
		t.Errorf("third: %+v", ms[2])
	}
}

// TestTrimEvictsWholeCachedExecutable: an executable that is all in the
// page cache (as a build or a copy leaves it; here read whole) is evicted
// by the process's first trim, after which only the pages it touched are
// cached; a second trim leaves it alone.
func TestTrimEvictsWholeCachedExecutable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only on Linux")
	}
	t.Setenv(KeepFoliosEnv, "")
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(exe); err != nil { // every page of the file cached
		t.Fatal(err)
	}
	// The executable's read-only mappings, resident or not.
	maps := func() []mapping {
		raw, err := os.ReadFile("/proc/self/smaps")
		if err != nil {
			t.Fatal(err)
		}
		var out []mapping
		for _, m := range parseSmaps(raw) {
			if m.path == exe && m.perms[1] == '-' && m.perms[3] == 'p' {
				out = append(out, m)
			}
		}
		return out
	}
	if !wholeFileCached(maps()) {
		t.Fatal("the executable was read whole but is not reported cached")
	}
	evicted.Store(false)
	droppedExact.Store(false)
	st, err := Trim()
	if err != nil {
		t.Fatal(err)
	}
	if !st.Evicted {
		t.Fatal("a wholly cached executable was not evicted")
	}
	if wholeFileCached(maps()) {
		t.Fatal("still wholly cached after the eviction")
	}
	if st, err := Trim(); err != nil || st.Evicted {
		t.Fatalf("second trim: evicted %v, err %v (once per process)", st.Evicted, err)
	}
}
