package memtrim

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Linux keeps the 64 KiB "fault-around" of a file mapping: a page fault on
// a file page maps, besides that page, every page of the same 64 KiB window
// that the page cache holds (and a fault that has to read the file reads a
// whole large folio into the page cache, up to 1 MiB on ext4 here, so the
// window is nearly always held). On the executable that makes every
// function a process runs cost 64 KiB of its resident set: the kernel runs
// a few MB of code scattered over a 19 MB text segment, and at the peak of
// 100 streams had 174 windows of it, 11 MB, resident.
//
// Fault-around is off for a mapping registered with a userfaultfd in
// write-protect mode (mm/memory.c, should_fault_around), and since Linux
// 6.7 a userfaultfd in asynchronous write-protect mode (UFFD_FEATURE_WP_ASYNC)
// may register any mapping, a private file mapping included, with no thread
// to answer faults: the kernel resolves write-protect faults itself, and
// these mappings are never written (they are read-only). Registered, a
// fault maps the one page it touched. The descriptor is kept open for the
// life of the process: closing it would unregister the mappings.
//
// Where userfaultfd is not allowed (a seccomp filter, an older kernel), the
// mappings keep fault-around; nothing else changes.

// FaultAroundEnv, set to any value, leaves the kernel's fault-around on the
// executable's mappings alone (for measuring).
const FaultAroundEnv = "FOYA_EXE_FAULT_AROUND"

// The userfaultfd ABI (include/uapi/linux/userfaultfd.h).
const (
	uffdUserModeOnly   = 1       // UFFD_USER_MODE_ONLY
	uffdAPI            = 0xaa    // UFFD_API
	uffdFeatureWPAsync = 1 << 15 // UFFD_FEATURE_WP_ASYNC
	uffdRegisterModeWP = 1 << 1  // UFFDIO_REGISTER_MODE_WP
	uffdioAPI          = 0xc018aa3f
	uffdioRegister     = 0xc020aa00
)

type uffdioAPIArg struct{ api, features, ioctls uint64 }

type uffdioRegisterArg struct{ start, len, mode, ioctls uint64 }

var (
	exactOnce sync.Once
	exactFD   *os.File // kept open (and reachable, so never finalized): see above
	exactErr  error
)

// errNoUserfaultfd is returned when the platform does not let this process
// turn fault-around off.
var errNoUserfaultfd = errors.New("memtrim: userfaultfd in asynchronous write-protect mode is not available")

// exactFaults turns fault-around off on maps, once per process, and
// reports whether it is off.
func exactFaults(maps []mapping) bool {
	if os.Getenv(FaultAroundEnv) != "" {
		return false
	}
	exactOnce.Do(func() { exactFD, exactErr = registerWP(maps) })
	return exactErr == nil && exactFD != nil
}

// registerWP registers maps with a new userfaultfd in asynchronous
// write-protect mode and returns the descriptor, which must stay open.
func registerWP(maps []mapping) (*os.File, error) {
	fd, _, errno := syscall.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|unix.O_NONBLOCK|uffdUserModeOnly, 0, 0)
	if errno != 0 {
		return nil, fmt.Errorf("%w: userfaultfd: %w", errNoUserfaultfd, errno)
	}
	f := os.NewFile(fd, "userfaultfd")
	api := uffdioAPIArg{api: uffdAPI, features: uffdFeatureWPAsync}
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, uffdioAPI, uintptr(unsafe.Pointer(&api))); errno != 0 {
		f.Close()
		return nil, fmt.Errorf("%w: UFFDIO_API: %w", errNoUserfaultfd, errno)
	}
	for _, m := range maps {
		if err := registerRange(fd, m.start, m.end-m.start); err != nil {
			f.Close() // unregisters what was registered
			return nil, err
		}
	}
	return f, nil
}

// registerRange registers [start, start+n) with the userfaultfd fd in
// write-protect mode.
func registerRange(fd, start, n uintptr) error {
	reg := uffdioRegisterArg{start: uint64(start), len: uint64(n), mode: uffdRegisterModeWP}
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, uffdioRegister, uintptr(unsafe.Pointer(&reg))); errno != 0 {
		return fmt.Errorf("memtrim: UFFDIO_REGISTER %x-%x: %w", start, start+n, errno)
	}
	return nil
}

// RegisteredMappings counts the mappings of the file at path in an smaps
// file (/proc/PID/smaps) that are registered with a userfaultfd in
// write-protect mode ("uw" among their VmFlags): the mappings on which
// fault-around is off.
func RegisteredMappings(smaps []byte, path string) int {
	n, mine := 0, false
	for _, line := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			mine = len(f) >= 6 && strings.Join(f[5:], " ") == path
		case mine && len(f) > 0 && f[0] == "VmFlags:" && slices.Contains(f[1:], "uw"):
			n++
		}
	}
	return n
}

// ExactFaultsSupported returns nil when this process may turn fault-around
// off on its mappings (a userfaultfd in asynchronous write-protect mode),
// and why not otherwise.
func ExactFaultsSupported() error {
	f, err := registerWP(nil)
	if err != nil {
		return err
	}
	return f.Close()
}
