package memtrim

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

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
	for _, m := range parseSmaps(raw) {
		if m.path != exe || m.perms[1] != '-' || m.perms[3] != 'p' || m.anonymous != 0 || m.rss == 0 {
			continue
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED); errno != 0 {
			return st, fmt.Errorf("memtrim: madvise %x-%x: %w", m.start, m.end, errno)
		}
		st.FileBytes += m.rss
	}
	return st, nil
}

// mapping is one entry of /proc/self/smaps.
type mapping struct {
	start, end     uintptr
	perms, path    string
	rss, anonymous int64 // bytes
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
		}
	}
	return out
}
