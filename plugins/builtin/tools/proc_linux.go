package tools

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the command in its own process group, so one kill reaches
// every process it started, and kills bash if the plugin dies.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
