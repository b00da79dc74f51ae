//go:build !linux

package cli

import "os/exec"

// childSysProcAttr does nothing off Linux: the CLI stops the kernel it
// started when the command ends.
func childSysProcAttr(*exec.Cmd) {}
