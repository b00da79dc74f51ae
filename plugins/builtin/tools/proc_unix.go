//go:build unix

package tools

import (
	"errors"
	"os/exec"
	"syscall"
)

// killGroup sends SIGKILL to the process group of cmd, which bash leads.
func killGroup(cmd *exec.Cmd) error {
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
