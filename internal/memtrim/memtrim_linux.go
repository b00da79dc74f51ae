package memtrim

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// evicted is set once this process has evicted its executable from the
// page cache.
var evicted atomic.Bool

// droppedExact is set once this process has dropped its mappings of its
// executable with fault-around off on them.
var droppedExact atomic.Bool

// dropExecutablePages reads /proc/self/smaps and calls
// madvise(MADV_DONTNEED) on every mapping of the executable file that is
// read-only, private and holds no anonymous (copied-on-write) page. For such
// a mapping MADV_DONTNEED only removes this process's page-table entries:
// the next access faults the same bytes in from the page cache. The running
// executable cannot be modified in place while it runs (ETXTBSY), so the
// bytes are the same. The first time the executable is found held in large
// folios, it is evicted as well (evictExecutable).
func dropExecutablePages(everything bool) (Stats, error) {
	if !everything && droppedExact.Load() {
		// Dropped once with fault-around off: what is mapped since is the
		// pages this process ran, one by one, no window around them.
		// Dropping them at every pause would have the next turn fault
		// each back alone (measured: ~10 ms more before the first delta
		// after a pause, against one fault per 64 KiB before); they stay
		// until a longer idle (TrimAll).
		return Stats{ExactFaults: true}, nil
	}
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return Stats{}, fmt.Errorf("memtrim: %w", err)
	}
	exe = strings.TrimSuffix(exe, " (deleted)")
	all, err := exeMappings(exe)
	if err != nil {
		return Stats{}, err
	}
	var st Stats
	// Before the pages are dropped: what is faulted back afterwards comes
	// back a page at a time.
	st.ExactFaults = exactFaults(all)
	maps := resident(all)
	for _, m := range maps {
		st.FileBytes += m.rss
	}
	// Once per process: folios that stayed mapped while the file was
	// evicted (the code running the eviction) keep their size, and a second
	// eviction would only make the next turn read from disk again.
	if !evicted.Load() && os.Getenv(KeepFoliosEnv) == "" && (filePmd(maps) > 0 || wholeFileCached(maps)) && !evicted.Swap(true) {
		if err := evictExecutable(exe, maps); err != nil {
			return st, err
		}
		st.Evicted = true
		droppedExact.Store(st.ExactFaults)
		return st, nil
	}
	if err := dontNeed(maps); err != nil {
		return st, err
	}
	droppedExact.Store(st.ExactFaults)
	return st, nil
}

// exeMappings are the mappings of the executable at exe that are
// read-only, private and hold no anonymous page.
func exeMappings(exe string) ([]mapping, error) {
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil, fmt.Errorf("memtrim: %w", err)
	}
	var out []mapping
	for _, m := range parseSmaps(raw) {
		if m.path == exe && m.perms[1] == '-' && m.perms[3] == 'p' && m.anonymous == 0 {
			out = append(out, m)
		}
	}
	return out, nil
}

// cleanExeMappings are those of exeMappings that have resident pages.
func cleanExeMappings(exe string) ([]mapping, error) {
	all, err := exeMappings(exe)
	return resident(all), err
}

// resident are those of maps that have resident pages.
func resident(maps []mapping) []mapping {
	var out []mapping
	for _, m := range maps {
		if m.rss != 0 {
			out = append(out, m)
		}
	}
	return out
}

// filePmd is how much of maps is mapped in PMD-sized folios.
func filePmd(maps []mapping) int64 {
	var n int64
	for _, m := range maps {
		n += m.filePmd
	}
	return n
}

// madvise applies advice to each of maps.
func madvise(maps []mapping, advice int) error {
	for _, m := range maps {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, uintptr(advice)); errno != 0 {
			return fmt.Errorf("memtrim: madvise(%d) %x-%x: %w", advice, m.start, m.end, errno)
		}
	}
	return nil
}

// dontNeed drops this process's page-table entries of maps.
func dontNeed(maps []mapping) error { return madvise(maps, syscall.MADV_DONTNEED) }

// evictExecutable drops this process's mappings of the executable (maps)
// and the file's page-cache pages that no process maps, so that what runs
// next is read back in small folios and only what is touched becomes
// resident (see the package comment).
func evictExecutable(exe string, maps []mapping) error {
	// The running executable itself, whatever its path names now.
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return fmt.Errorf("memtrim: %w", err)
	}
	defer f.Close()
	fd := int(f.Fd())
	// A binary written moments ago (a build, a copy) may still have dirty
	// pages, which the kernel neither reclaims nor evicts.
	if err := unix.Fdatasync(fd); err != nil {
		return fmt.Errorf("memtrim: fdatasync %s: %w", exe, err)
	}
	// No readahead on these mappings from now on: a fault reads the one
	// page it needs, in a small folio.
	if err := madvise(maps, syscall.MADV_RANDOM); err != nil {
		return err
	}
	// Reclaim the folios only this process maps: each is unmapped and
	// dropped from the page cache in one step, so that no other thread (nor
	// this one, returning from the call) maps it again in between, as it
	// may between MADV_DONTNEED and the eviction below. Linux does this only
	// for a file the process owns or may write; otherwise, and on kernels
	// without MADV_PAGEOUT, the eviction below does what it can.
	_ = madvise(maps, unix.MADV_PAGEOUT)
	pmd := filePmd(maps)
	// Other threads keep running code while the mappings are gone and may
	// map some large folios again before the eviction, which then keeps
	// them: drop and evict again while that shrinks what is still mapped
	// in large folios (each pass faults back only small ones).
	for range 8 {
		if err := dontNeed(maps); err != nil {
			return err
		}
		if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
			return fmt.Errorf("memtrim: fadvise %s: %w", exe, err)
		}
		now, err := cleanExeMappings(exe)
		if err != nil {
			return err
		}
		left := filePmd(now)
		if left == 0 || left >= pmd {
			return nil
		}
		pmd = left
	}
	return nil
}

// wholeFileCached reports whether nearly all (90%) of maps is in the page
// cache (mincore), which is the case for a binary just written by a build
// or a copy, or read in with large readahead: each fault then maps the
// cached pages around it (64 KiB fault-around) although the process runs
// a fraction of them. A binary this process or an earlier one evicted
// holds only the pages that were touched since, far fewer.
func wholeFileCached(maps []mapping) bool {
	var pages, cached int
	for _, m := range maps {
		n := int(m.end-m.start) / os.Getpagesize()
		if n == 0 {
			continue
		}
		vec := make([]byte, n)
		if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, m.start, m.end-m.start, uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
			return false
		}
		pages += n
		for _, v := range vec {
			cached += int(v & 1)
		}
	}
	return pages > 0 && cached*10 >= pages*9
}

// mapping is one entry of /proc/self/smaps.
type mapping struct {
	start, end     uintptr
	perms, path    string
	rss, anonymous int64 // bytes
	filePmd        int64 // bytes of file pages mapped by PMD (2 MiB folios)
}

// parseSmaps parses the header line and the Rss and Anonymous fields of
// every mapping in an smaps file.
func parseSmaps(raw []byte) []mapping {
	var out []mapping
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, ok := strings.Cut(f[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if !ok || err1 != nil || err2 != nil || len(f[1]) != 4 {
				continue
			}
			m := mapping{start: uintptr(start), end: uintptr(end), perms: f[1]}
			if len(f) >= 6 {
				m.path = strings.Join(f[5:], " ")
			}
			out = append(out, m)
			continue
		}
		if len(out) == 0 || len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "Rss:":
			out[len(out)-1].rss = kb << 10
		case "Anonymous:":
			out[len(out)-1].anonymous = kb << 10
		case "FilePmdMapped:":
			out[len(out)-1].filePmd = kb << 10
		}
	}
	return out
}
