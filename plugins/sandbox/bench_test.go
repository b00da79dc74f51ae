//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkHelper runs `true` under the helper: namespaces, masks and
// Landlock, with and without the limits stage (and its pids cgroup).
func BenchmarkHelper(b *testing.B) {
	exe, _ := os.Executable()
	probe, err := Probe(exe, Policy{Network: true})
	if err != nil {
		b.Fatal(err)
	}
	devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer devnull.Close()
	for _, tc := range []struct {
		name   string
		limits Limits
	}{{"no-limits", Limits{}}, {"limits", DefaultLimits()}, {"limits-no-procs", Limits{FileSize: 1 << 30}}} {
		b.Run(tc.name, func(b *testing.B) {
			p := Policy{Namespaces: probe.Namespaces, Writable: []string{"/tmp"}, Network: true, Dir: "/", Argv: []string{"/bin/true"}, Limits: tc.limits, UID: os.Getuid(), GID: os.Getgid()}
			for b.Loop() {
				pr, err := Start(exe, p, devnull)
				if err != nil {
					b.Fatal(err)
				}
				_ = pr.Cmd.Wait()
				if rep, err := pr.Report(); err != nil || rep.ExitCode != 0 {
					b.Fatalf("%+v %v", rep, err)
				}
			}
		})
	}
}

// BenchmarkReadConfinement runs `true` and `ls -lR` of a 2,000-file tree
// under the helper with Landlock handling writes only and writes and
// reads (ConfineReads: the system roots, the tree and /tmp readable).
func BenchmarkReadConfinement(b *testing.B) {
	exe, _ := os.Executable()
	probe, err := Probe(exe, Policy{Network: true})
	if err != nil {
		b.Fatal(err)
	}
	tree := b.TempDir()
	for d := range 20 {
		dir := filepath.Join(tree, fmt.Sprintf("d%02d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", f)), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer devnull.Close()
	for _, cmd := range []struct{ name, script string }{{"true", "true"}, {"ls2000", "ls -lR " + tree + " >/dev/null"}} {
		for _, reads := range []bool{false, true} {
			name := cmd.name + "/writes-only"
			if reads {
				name = cmd.name + "/reads-confined"
			}
			b.Run(name, func(b *testing.B) {
				p := Policy{Namespaces: probe.Namespaces, Writable: []string{"/tmp"}, Readable: []string{tree}, ConfineReads: reads,
					Devices: DefaultDevices, Network: true, Dir: "/tmp", Argv: []string{"bash", "-c", cmd.script},
					Env: []string{"PATH=/usr/bin:/bin"}, UID: os.Getuid(), GID: os.Getgid()}
				var cpu time.Duration
				for b.Loop() {
					pr, err := Start(exe, p, devnull)
					if err != nil {
						b.Fatal(err)
					}
					_ = pr.Cmd.Wait()
					if rep, err := pr.Report(); err != nil || rep.ExitCode != 0 {
						b.Fatalf("%+v %v", rep, err)
					}
					cpu += pr.Cmd.ProcessState.UserTime() + pr.Cmd.ProcessState.SystemTime()
				}
				// CPU time of the helper and the command (less sensitive
				// to the machine's load than wall time).
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// BenchmarkCPUMeter runs `sleep 1` under the helper with and without a
// CPU budget (the helper then measures the call every 100 ms), with and
// without namespaces, and reports the CPU time of the helper and the
// command: the cost of watching.
func BenchmarkCPUMeter(b *testing.B) {
	exe, _ := os.Executable()
	probe, err := Probe(exe, Policy{Network: true})
	if err != nil {
		b.Fatal(err)
	}
	devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer devnull.Close()
	for _, ns := range []bool{probe.Namespaces, false} {
		for _, budget := range []uint64{0, 600} {
			name := fmt.Sprintf("namespaces=%v/budget=%d", ns, budget)
			b.Run(name, func(b *testing.B) {
				p := Policy{Namespaces: ns, Writable: []string{"/tmp"}, Devices: DefaultDevices, Network: true, Dir: "/tmp",
					Argv: []string{"sleep", "1"}, Env: []string{"PATH=/usr/bin:/bin"}, UID: os.Getuid(), GID: os.Getgid(),
					Limits: Limits{FileSize: 1 << 30, CPUSeconds: budget}}
				var cpu time.Duration
				var meter string
				for b.Loop() {
					pr, err := Start(exe, p, devnull)
					if err != nil {
						b.Fatal(err)
					}
					_ = pr.Cmd.Wait()
					rep, err := pr.Report()
					if err != nil || rep.ExitCode != 0 {
						b.Fatalf("%+v %v", rep, err)
					}
					meter = rep.CPUMeter
					cpu += pr.Cmd.ProcessState.UserTime() + pr.Cmd.ProcessState.SystemTime()
				}
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
				if meter != "" {
					b.Logf("meter: %s", meter)
				}
			})
		}
	}
}
