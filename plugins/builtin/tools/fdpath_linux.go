package tools

import (
	"os"
	"strconv"
	"syscall"
)

// nonBlock keeps an open of a FIFO from blocking (no effect on files).
const nonBlock = syscall.O_NONBLOCK

// fdPath is the path the kernel has for the open file f now.
func fdPath(f *os.File) (string, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return "", false
	}
	var p string
	cerr := rc.Control(func(fd uintptr) {
		p, err = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
	})
	if cerr != nil || err != nil || len(p) == 0 || p[0] != '/' {
		return "", false
	}
	return p, true
}
