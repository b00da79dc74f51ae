//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockDataDir takes an exclusive lock on <dir>/kernel.lock for the life of
// the process, so that two kernels never share a data directory (the
// catalog file and plugin sockets are not safe to share).
func lockDataDir(dir string) (release func(), err error) {
	path := filepath.Join(dir, "kernel.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data directory %s is in use by another foya kernel (pid %s); stop it or choose another --data-dir; client commands reach that kernel with --addr HOST:PORT (its listen address, in its log) instead of starting one", dir, strings.TrimSpace(string(pid)))
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}
