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

// dropExecutablePages reads /proc/self/smaps and calls
// madvise(MADV_DONTNEED) on every mapping of the executable file that is
// read-only, private and holds no anonymous (copied-on-write) page. For such
// a mapping MADV_DONTNEED only removes this process's page-table entries:
// the next access faults the same bytes in from the page cache. The running
// executable cannot be modified in place while it runs (ETXTBSY), so the
// bytes are the same.
func dropExecutablePages() (Stats, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return Stats{}, fmt.Errorf("memtrim: %w", err)
	}
	exe = strings.TrimSuffix(exe, " (deleted)")
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return Stats{}, fmt.Errorf("memtrim: %w", err)
	}
	var st Stats
	var pmd int64
	maps := parseSmaps(raw)
	for _, m := range maps {
		if m.path == exe {
			pmd += m.filePmd
		}
	}
	// Once per process: folios that stayed mapped while the file was
	// evicted (the code running the eviction) keep their size, and a second
	// eviction would only make the next turn read from disk again.
	evict := (pmd > 0 || wholeFileCached(exe, maps)) && os.Getenv(KeepFoliosEnv) == "" && !evicted.Swap(true)
	if evict {
		// A binary written moments ago (a build, a copy) may still have
		// dirty pages, which the kernel neither reclaims nor evicts.
		if err := syncFile(exe); err != nil {
			return st, err
		}
	}
	for _, m := range maps {
		if m.path != exe || m.perms[1] != '-' || m.perms[3] != 'p' || m.anonymous != 0 || m.rss == 0 {
			continue
		}
		if evict {
			// No readahead on these mappings from now on: a fault reads
			// the one page it needs, in a small folio.
			if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_RANDOM); errno != 0 {
				return st, fmt.Errorf("memtrim: madvise random %x-%x: %w", m.start, m.end, errno)
			}
			// Reclaim the folios only this process maps: each is unmapped
			// and dropped from the page cache in one step, so that no
			// other thread (nor this one, returning from the call) maps it
			// again in between, as it may between MADV_DONTNEED and the
			// eviction below. Linux does this only for a file the process
			// owns or may write; otherwise, and on kernels without
			// MADV_PAGEOUT, the eviction below does what it can.
			_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_PAGEOUT)
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED); errno != 0 {
			return st, fmt.Errorf("memtrim: madvise %x-%x: %w", m.start, m.end, errno)
		}
		st.FileBytes += m.rss
	}
	if evict {
		// The page cache holds the executable in PMD-sized folios (a
		// binary freshly written by the linker or copied): every fault
		// maps 2 MiB of it. With this process's mappings gone, drop the
		// file's cached pages that no process maps, so that what runs
		// next is read back in readahead-sized folios and only what is
		// touched becomes resident.
		if err := evictFile(exe); err != nil {
			return st, err
		}
		// Other threads kept running code while the mappings were gone
		// and mapped some large folios again before the eviction, which
		// then kept them: drop and evict again while that shrinks what is
		// still mapped in large folios (each pass faults back only small
		// ones, the mappings read no ahead now).
		for range 8 {
			left, err := exeFilePmd(exe)
			if err != nil || left == 0 || left >= pmd {
				break
			}
			pmd = left
			for _, m := range maps {
				if m.path == exe && m.perms[1] == '-' && m.perms[3] == 'p' && m.anonymous == 0 && m.rss != 0 {
					_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED)
				}
			}
			if err := evictFile(exe); err != nil {
				return st, err
			}
		}
		st.Evicted = true
	}
	return st, nil
}

// wholeFileCached reports whether nearly all (90%) of the executable's
// read-only mappings are in the page cache (mincore), which is the case
// for a binary just written by a build or a copy, or read in with large
// readahead: each fault then maps the cached pages around it (64 KiB
// fault-around) although the process runs a fraction of them. A binary
// this process or an earlier one evicted holds only the pages that were
// touched since, far fewer.
func wholeFileCached(exe string, maps []mapping) bool {
	var pages, cached int
	for _, m := range maps {
		if m.path != exe || m.perms[1] != '-' || m.perms[3] != 'p' {
			continue
		}
		n := int(m.end-m.start) / os.Getpagesize()
		vec := make([]byte, n)
		if n == 0 {
			continue
		}
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

// exeFilePmd is how much of the executable at path this process maps in
// PMD-sized folios.
func exeFilePmd(exe string) (int64, error) {
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("memtrim: %w", err)
	}
	var n int64
	for _, m := range parseSmaps(raw) {
		if m.path == exe {
			n += m.filePmd
		}
	}
	return n, nil
}

// syncFile writes out the dirty page-cache pages of the file at path.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("memtrim: %w", err)
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("memtrim: fdatasync %s: %w", path, err)
	}
	return nil
}

// evictFile asks the kernel to drop the page-cache pages of the file at
// path that no process maps (clean pages only; the file is unchanged).
func evictFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("memtrim: %w", err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("memtrim: fadvise %s: %w", path, err)
	}
	return nil
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
