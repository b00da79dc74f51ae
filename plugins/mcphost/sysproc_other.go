//go:build !linux

package mcphost

import "os/exec"

// childSysProcAttr does nothing off Linux: there is no parent-death signal.
func childSysProcAttr(*exec.Cmd) {}

// killGroup kills only the server process off Linux.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
