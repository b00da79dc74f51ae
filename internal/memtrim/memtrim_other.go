//go:build !linux

package memtrim

import "errors"

func dropExecutablePages(bool) (Stats, error) { return Stats{}, nil }

// ExactFaultsSupported returns an error: fault-around is a Linux matter.
func ExactFaultsSupported() error {
	return errors.New("memtrim: fault-around is only turned off on Linux")
}
