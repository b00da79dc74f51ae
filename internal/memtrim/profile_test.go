package memtrim

import (
	"runtime"
	"testing"
)

func TestSampleHeap(t *testing.T) {
	saved := runtime.MemProfileRate
	t.Cleanup(func() { runtime.MemProfileRate = saved })
	t.Setenv("GODEBUG", "")
	SampleHeap(true)
	if runtime.MemProfileRate != ProfiledHeapRate {
		t.Fatalf("serving: rate %d, want %d", runtime.MemProfileRate, ProfiledHeapRate)
	}
	SampleHeap(false)
	if runtime.MemProfileRate != 0 {
		t.Fatalf("not serving: rate %d, want 0", runtime.MemProfileRate)
	}
	// GODEBUG's memprofilerate is the runtime's to apply: left as it is.
	runtime.MemProfileRate = 12345
	t.Setenv("GODEBUG", "madvdontneed=1, memprofilerate=0")
	SampleHeap(true)
	SampleHeap(false)
	if runtime.MemProfileRate != 12345 {
		t.Fatalf("with GODEBUG memprofilerate: rate %d, want it untouched", runtime.MemProfileRate)
	}
	for v, want := range map[string]bool{"memprofilerate=1": true, "x=1,memprofilerate=8192": true, "memprofilerates=1": false, "": false, "gctrace=1": false} {
		if got := godebugSets(v, "memprofilerate"); got != want {
			t.Errorf("godebugSets(%q) = %v, want %v", v, got, want)
		}
	}
}
