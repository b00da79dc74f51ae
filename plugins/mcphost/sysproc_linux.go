package mcphost

import (
	"os/exec"
	"syscall"
)

// childSysProcAttr makes a STDIO server die with the kernel (SIGKILL when
// the parent goes away, even after kill -9 of the kernel) and puts it in its
// own process group, so that killGroup also reaches what it started (npx
// runs node as a child).
func childSysProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// killGroup kills the server's process group; errors (already gone) are
// ignored.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
