//go:build !linux

package host

import "os/exec"

// childSysProcAttr does nothing off Linux: there is no parent-death signal,
// so plugins are only stopped by Manager.Close.
func childSysProcAttr(*exec.Cmd) {}
