//go:build !linux

package main

// protectProcess does nothing off Linux.
func protectProcess() error { return nil }
