//go:build !linux

package daemon

// protectProcess does nothing off Linux.
func protectProcess() error { return nil }
