//go:build !linux

package memtrim

func dropExecutablePages() (Stats, error) { return Stats{}, nil }
