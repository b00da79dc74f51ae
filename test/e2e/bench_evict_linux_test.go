package e2e

import (
	"os"
	"syscall"
)

// evictFromPageCache drops the clean, unmapped pages of path from the page
// cache (fsync, then posix_fadvise POSIX_FADV_DONTNEED), so that the next
// process to run it reads it from disk, as after a reboot.
func evictFromPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	const fadvDontNeed = 4
	if _, _, errno := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); errno != 0 {
		return errno
	}
	return nil
}
