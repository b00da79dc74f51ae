package memtrim

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// presentPages counts the pages of b mapped in this process (pagemap).
func presentPages(t *testing.T, b []byte) int {
	t.Helper()
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Fatal(err)
	}
	defer pm.Close()
	page := os.Getpagesize()
	buf := make([]byte, len(b)/page*8)
	if _, err := pm.ReadAt(buf, int64(uintptr(unsafe.Pointer(&b[0]))/uintptr(page)*8)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := 0; i < len(buf); i += 8 {
		if buf[i+7]&0x80 != 0 { // bit 63: present
			n++
		}
	}
	return n
}

// mapFile maps the file at path read-only and private, as the loader maps
// an executable's text.
func mapFile(t *testing.T, path string, size int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Munmap(b) })
	if err := unix.Madvise(b, unix.MADV_RANDOM); err != nil {
		t.Fatal(err)
	}
	return b
}

// sink keeps the reads of touch.
var sink byte

// touch reads one byte every stride bytes of b and returns how many.
func touch(b []byte, stride int) (n int) {
	for off := stride / 2; off < len(b); off += stride {
		sink += b[off]
		n++
	}
	return n
}

// TestRegisteredMappingFaultsOnePage: a read-only private file mapping
// registered with the userfaultfd maps the page a fault touched and no
// other, where an unregistered mapping of the same cached file gets the
// pages around it (fault-around) as well.
func TestRegisteredMappingFaultsOnePage(t *testing.T) {
	const size, stride = 8 << 20, 256 << 10
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	// As Trim leaves the executable: out of the page cache (a file just
	// written is held in 2 MiB folios, which a fault maps whole either
	// way), and no readahead on the mappings.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	plain := mapFile(t, path, size)
	touches := touch(plain, stride)
	around := presentPages(t, plain)

	exact := mapFile(t, path, size)
	start := uintptr(unsafe.Pointer(&exact[0]))
	uffd, err := registerWP([]mapping{{start: start, end: start + size}})
	if errors.Is(err, errNoUserfaultfd) {
		t.Skipf("this kernel keeps fault-around: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer uffd.Close()
	if got := touch(exact, stride); got != touches {
		t.Fatal(got)
	}
	got := presentPages(t, exact)
	t.Logf("%d touches: %d pages mapped without the userfaultfd, %d with it", touches, around, got)
	if got != touches {
		t.Fatalf("registered: %d pages mapped for %d touches, want one each", got, touches)
	}
	if around == touches {
		t.Logf("fault-around is off on this machine: the unregistered mapping got one page a fault too")
	}
}

// TestTrimTurnsFaultAroundOff: after Trim, the executable's mappings are
// registered (the "uw" flag in smaps) and the program keeps running code
// from them.
func TestTrimTurnsFaultAroundOff(t *testing.T) {
	st, err := Trim()
	if err != nil {
		t.Fatal(err)
	}
	if !st.ExactFaults {
		if err := ExactFaultsSupported(); errors.Is(err, errNoUserfaultfd) {
			t.Skipf("this kernel keeps fault-around: %v", err)
		}
		t.Fatalf("Trim left fault-around on: %v", exactErr)
	}
	exe, raw := selfSmaps(t)
	if n := RegisteredMappings(raw, exe); n == 0 {
		t.Fatalf("no mapping of %s has the uw flag:\n%s", exe, raw)
	}
	// The descriptor is close-on-exec: no child process gets it.
	if link, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", exactFD.Fd())); err != nil || !strings.Contains(link, "userfaultfd") {
		t.Fatalf("the descriptor links to %q (%v)", link, err)
	}
	fds, err := exec.Command("ls", "-l", "/proc/self/fd").CombinedOutput()
	if err != nil {
		t.Fatalf("ls: %v %s", err, fds)
	}
	if strings.Contains(string(fds), "userfaultfd") {
		t.Fatalf("a child process inherited the userfaultfd:\n%s", fds)
	}
	// Dropped once with fault-around off, the pages run since stay at the
	// next Trim; TrimAll drops them.
	if sink += strings.Repeat("ab", 3)[1]; exeResident(t) == 0 {
		t.Fatal("nothing of the executable is resident")
	}
	before := exeResident(t)
	if st, err := Trim(); err != nil || st.FileBytes != 0 || !st.ExactFaults {
		t.Fatalf("second Trim: %+v, %v", st, err)
	}
	if after := exeResident(t); after < before {
		t.Fatalf("the second Trim dropped pages: %d → %d bytes resident", before, after)
	}
	if st, err := TrimAll(); err != nil || st.FileBytes == 0 {
		t.Fatalf("TrimAll: %+v, %v", st, err)
	}
	for range 3 {
		if _, err := Trim(); err != nil {
			t.Fatal(err)
		}
	}
}
