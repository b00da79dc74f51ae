//go:build !linux

package tools

// dataDirMasked is false off Linux: no mount namespaces.
func dataDirMasked(string) bool { return false }
