//go:build unix && !linux

package tools

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the command in its own process group, so one kill reaches
// every process it started.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
