package daemon

import (
	"os"
	"runtime/debug"

	"github.com/foya-dev/foya/internal/memtrim"
)

// kernelGCPercent is the kernel's garbage collector target unless GOGC
// says otherwise: collect when the heap has grown by half of what was live
// after the last collection (Go's default is all of it). The kernel's live
// heap is small — with 100 sessions streaming it is ~10 MB — so the
// default mostly holds garbage; at half, the peak of 100 streams is ~8 MB
// lower at the price of more frequent (shorter) collections.
const kernelGCPercent = 50

// TuneRuntime sets the Go runtime up for a long-running kernel process:
// the garbage collector target above (GOGC in the environment wins), and
// no heap-profile sampling unless --pprof serves profiles (the sampler's
// table of allocation sites is ~1.4 MB once it fills); with --pprof a
// sample every 4 KiB, as the built-in plugins' profiles, so that a heap
// profile of a few MB shows more than a dozen sites; a memprofilerate in
// GODEBUG wins (memtrim.SampleHeap). It changes process
// globals, so only the `foya serve` command calls it, not the tests that
// run kernels in their own process.
func (m *Main) TuneRuntime() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(kernelGCPercent)
	}
	memtrim.SampleHeap(m.Config.Pprof != "")
}
