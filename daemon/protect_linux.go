package daemon

import "golang.org/x/sys/unix"

// protectProcess makes the kernel process non-dumpable: other processes of
// the same user (a tool command where the sandbox has no PID namespace)
// cannot read its /proc/<pid>/environ, which may hold provider keys and
// FOYA_TOKEN, nor its memory. Children are not affected.
func protectProcess() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
