// Package memtrim hands memory an idle process no longer needs back to the
// operating system: the Go heap's free pages, and — on Linux — this
// process's mappings of pages of its own executable.
//
// Built-in plugin processes re-execute the whole kernel binary. Running the
// initialisers of every package touches code and read-only data all over
// the executable, and on current Linux kernels the page cache holds the
// executable in large folios (up to 2 MiB) that a page fault maps whole, so
// a freshly started plugin has nearly all of the executable's ~32 MB of code
// and read-only data in its resident set although it later runs a small
// part of it. Those pages are clean copies of the file: dropping this
// process's mappings of them (madvise MADV_DONTNEED) frees nothing the
// process cannot fault back in from the page cache, where the kernel
// process keeps them anyway, and whatever the plugin runs afterwards comes
// back on first use. This lowers the process's resident set (RSS), not the
// machine's memory use: the pages stay cached and shared (PSS barely moves).
// Writable mappings (data, heap, stacks) and read-only mappings holding
// private copies (relocated RELRO pages) are never touched.
package memtrim

import "runtime/debug"

// Stats is what one Trim released, in bytes (as far as the platform tells).
type Stats struct {
	// FileBytes is the resident size of the executable's clean read-only
	// mappings that were dropped.
	FileBytes int64
}

// Trim returns free heap memory to the operating system and drops the
// process's resident mappings of its executable's clean read-only pages.
// It is safe at any time (at worst it costs page faults afterwards) and
// meant for moments a process has gone idle.
func Trim() (Stats, error) {
	debug.FreeOSMemory()
	return dropExecutablePages()
}
