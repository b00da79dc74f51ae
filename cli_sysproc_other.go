//go:build !linux

package main

import "os/exec"

// childSysProcAttr does nothing off Linux: the CLI stops the kernel it
// started when the command ends.
func childSysProcAttr(*exec.Cmd) {}

// protectProcess does nothing off Linux.
func protectProcess() error { return nil }
