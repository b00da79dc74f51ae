package storage

import (
	"sync"

	"modernc.org/libc"
)

var pinOnce sync.Once

// pinAllocator keeps one block of each small size class (16 B to 16 KiB)
// of the SQLite driver's allocator allocated for the life of the process.
//
// modernc's libc carves small blocks out of 64 KiB pages that it maps from
// the operating system and unmaps as soon as their last block is freed.
// SQLite allocates and frees some blocks of a size of which nothing else is
// live, the scratch space of every B-tree page split (about 8 KiB) the
// most: each was an mmap, two munmaps to align it, page faults, and a
// munmap at its free, a quarter of a fork's CPU (BenchmarkForkHistory10k).
// With one block of the class held, its page stays mapped and is reused.
// The cost is at most one 64 KiB page of address space per class, most of
// it never touched.
func pinAllocator() {
	pinOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		for log := 4; log <= 14; log++ {
			libc.Xmalloc(tls, libc.Tsize_t(1<<log))
		}
	})
}
