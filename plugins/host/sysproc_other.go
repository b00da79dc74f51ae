//go:build !linux

package host

import (
	"io/fs"
	"os/exec"
)

// childSysProcAttr does nothing off Linux: there is no parent-death signal,
// so plugins are only stopped by Manager.Close.
func childSysProcAttr(*exec.Cmd) {}

// inode is 0 off Linux: size and modification time key the cache.
func inode(fs.FileInfo) uint64 { return 0 }
