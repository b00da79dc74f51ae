package host

import (
	"io/fs"
	"os/exec"
	"syscall"
)

// childSysProcAttr makes a plugin die with the kernel: the kernel sends it
// SIGKILL when the parent goes away, even after kill -9 of the kernel. The
// child gets its own process group so a terminal's Ctrl-C reaches only the
// kernel, which then shuts plugins down in order.
func childSysProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// inode is fi's inode number (part of a plugin description's cache key).
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}
