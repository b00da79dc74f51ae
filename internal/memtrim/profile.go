package memtrim

import (
	"os"
	"runtime"
	"strings"
)

// ProfiledHeapRate is the heap profile's sampling rate of a process that
// serves its profiles: a sample every 4 KiB allocated. A kernel's or a
// plugin's heap is a few MB, too few samples at Go's default of 512 KiB.
const ProfiledHeapRate = 4 << 10

// SampleHeap sets how often the runtime samples allocations for the heap
// profile: every ProfiledHeapRate bytes in a process that serves its
// profiles (serving), never in one that does not (the sampler's table of
// allocation sites is ~1.4 MB once it fills). A memprofilerate in GODEBUG
// wins over either: memprofilerate=0 takes a CPU profile without the
// sampler's own cost in it (about a tenth of the CPU of a path that
// allocates much), a small rate a finer heap profile.
func SampleHeap(serving bool) {
	if godebugSets(os.Getenv("GODEBUG"), "memprofilerate") {
		return // the runtime read it at start
	}
	if serving {
		runtime.MemProfileRate = ProfiledHeapRate
	} else {
		runtime.MemProfileRate = 0
	}
}

// godebugSets reports whether the GODEBUG value v sets key.
func godebugSets(v, key string) bool {
	for _, kv := range strings.Split(v, ",") {
		if k, _, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == key {
			return true
		}
	}
	return false
}
