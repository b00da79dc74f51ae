//go:build linux

package sandbox

import (
	"crypto/sha256"
	"fmt"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWakeUnderBusyChildren measures what --child-nice buys the
// kernel: while as many confined children as there are CPUs spin
// (`while :; do :; done`, started as the kernel starts a hook or a
// terminal), how late this process's goroutine wakes from a 1 ms timer
// (late-p50-µs, late-p99-µs) and how long the work it then does takes
// (hashing 1 MiB, about 0.5 ms on an idle CPU: work-p50-µs, work-p99-µs),
// with the children at the kernel's level and five levels below it.
func BenchmarkWakeUnderBusyChildren(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, nice := range []int{0, 5} {
		b.Run(fmt.Sprintf("child-nice=%d", nice), func(b *testing.B) {
			if err := SetChildNice(nice); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = SetChildNice(0) }()
			out, err := os.CreateTemp(b.TempDir(), "out")
			if err != nil {
				b.Fatal(err)
			}
			p := Policy{Writable: []string{"/tmp"}, Network: true, Dir: "/", Argv: []string{"bash", "-c", "while :; do :; done"},
				Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, UID: os.Getuid(), GID: os.Getgid()}
			for range runtime.NumCPU() {
				pr, err := Start(exe, p, out)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() {
					_ = syscall.Kill(-pr.Cmd.Process.Pid, syscall.SIGKILL)
					_ = pr.Cmd.Wait()
				})
			}
			time.Sleep(200 * time.Millisecond) // the children are spinning
			buf := make([]byte, 1<<20)
			var late, work []time.Duration
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				time.Sleep(time.Millisecond)
				woke := time.Now()
				sha256.Sum256(buf)
				late, work = append(late, woke.Sub(start)-time.Millisecond), append(work, time.Since(woke))
			}
			b.StopTimer()
			for _, m := range []struct {
				name string
				d    []time.Duration
			}{{"late", late}, {"work", work}} {
				slices.Sort(m.d)
				b.ReportMetric(float64(m.d[len(m.d)/2].Microseconds()), m.name+"-p50-µs")
				b.ReportMetric(float64(m.d[len(m.d)*99/100].Microseconds()), m.name+"-p99-µs")
			}
		})
	}
}
