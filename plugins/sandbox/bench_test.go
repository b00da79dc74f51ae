//go:build linux

package sandbox

import (
	"os"
	"testing"
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
