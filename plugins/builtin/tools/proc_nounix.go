//go:build !unix

package tools

import "os/exec"

// setProcAttr does nothing without process groups.
func setProcAttr(*exec.Cmd) {}

// killGroup can only kill bash itself without process groups.
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
