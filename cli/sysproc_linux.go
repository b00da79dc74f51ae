package cli

import (
	"os/exec"
	"syscall"
)

// childSysProcAttr puts a spawned kernel in its own process group, so that a
// terminal's Ctrl-C reaches only the CLI (which stops the turn and then the
// kernel in order), and makes it exit when the CLI dies.
func childSysProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
}
