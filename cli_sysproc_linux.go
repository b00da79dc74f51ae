package main

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// childSysProcAttr puts a spawned kernel in its own process group, so that a
// terminal's Ctrl-C reaches only the CLI (which stops the turn and then the
// kernel in order), and makes it exit when the CLI dies.
func childSysProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
}

// protectProcess makes the kernel process non-dumpable: other processes of
// the same user (a tool command where the sandbox has no PID namespace)
// cannot read its /proc/<pid>/environ, which may hold provider keys and
// FOYA_TOKEN, nor its memory. Children are not affected.
func protectProcess() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
