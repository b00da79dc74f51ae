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
//
// When the executable is held in 2 MiB folios (`FilePmdMapped` in smaps: a
// binary freshly written by the Go linker, or copied, stays so in the page
// cache until evicted), the pages a process touches are mapped 2 MiB at a
// time, so a kernel that runs a few MB of code has nearly all of its ~40 MB
// of code and read-only data resident; and an executable that is wholly in
// the page cache gets the cached 64 KiB around each fault mapped. The first
// Trim of such a process
// then also drops the file's page-cache pages that no process maps
// (posix_fadvise DONTNEED, after writing out pages a fresh build may still
// hold dirty) and turns readahead off on its mappings of the executable
// (MADV_RANDOM): what runs afterwards is read back from disk once, in
// small folios, and only what is touched becomes resident again. This lowers
// what the machine spends (PSS), at the price of reading the touched pages
// from disk once. Folios that other threads keep mapped while it runs (the
// runtime's hottest code) stay large. A binary already cached in small
// folios is left alone. Set FOYA_KEEP_EXE_FOLIOS=1 to keep the page cache
// as it is.
//
// Small folios are not enough: a fault on a file mapping also maps the
// cached pages of the 64 KiB window around it (fault-around), and a fault
// that reads the file reads up to a 1 MiB folio, so every function run
// costs 64 KiB. The first Trim therefore also turns fault-around off on the
// executable's read-only mappings (faultaround_linux.go): afterwards a
// fault maps the one page it touched.
package memtrim

import "runtime/debug"

// Stats is what one Trim released, in bytes (as far as the platform tells).
type Stats struct {
	// FileBytes is the resident size of the executable's clean read-only
	// mappings that were dropped.
	FileBytes int64
	// Evicted is set when the executable was held in 2 MiB page-cache
	// folios, or wholly cached, and its unmapped pages were dropped from
	// the page cache, so that they come back in small folios (see the
	// package comment).
	Evicted bool
	// ExactFaults is set when fault-around is off on the executable's
	// mappings: a page fault there maps the one page it touched, not the
	// 64 KiB around it (Linux only, see faultaround_linux.go).
	ExactFaults bool
}

// KeepFoliosEnv, set to any value, keeps the executable's page cache as it
// is: Trim then only drops this process's mappings.
const KeepFoliosEnv = "FOYA_KEEP_EXE_FOLIOS"

// Trim returns free heap memory to the operating system and drops the
// process's resident mappings of its executable's clean read-only pages.
// It is safe at any time (at worst it costs page faults afterwards) and
// meant for moments a process has gone idle.
//
// Once the mappings have been dropped with fault-around off (see
// ExactFaults), later calls leave them: what is mapped since is only the
// pages the process ran, and the next turn would fault each back alone.
// TrimAll drops them too.
func Trim() (Stats, error) {
	debug.FreeOSMemory()
	return dropExecutablePages(false)
}

// TrimAll is Trim that always drops the executable's mappings, for a
// process idle for long (the kernel: when its idle plugins are stopped).
func TrimAll() (Stats, error) {
	debug.FreeOSMemory()
	return dropExecutablePages(true)
}
