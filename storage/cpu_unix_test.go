//go:build unix

package storage_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuMeter measures the CPU time (user + system, all threads) the test
// process spends: on a machine shared with other work the wall time of a
// benchmark says more about the others than about the code, its CPU time
// much less.
type cpuMeter struct{ start time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuMeter { return cpuMeter{start: processCPU()} }

// report adds the CPU time per operation since start (cpu-µs/op).
func (m cpuMeter) report(b *testing.B) {
	if b.N > 0 {
		b.ReportMetric(float64((processCPU()-m.start).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}
