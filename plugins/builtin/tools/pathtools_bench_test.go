package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
)

// BenchmarkPathTools measures one read and one write call through Set.Call
// (the path resolution, the os.Root opens and descriptor checks, the file
// I/O; no plugin RPC) on a 4 KiB file three directories deep, with a data
// directory to keep out of.
func BenchmarkPathTools(b *testing.B) {
	dir, _ := filepath.EvalSymlinks(b.TempDir())
	proj := filepath.Join(dir, "proj")
	file := filepath.Join(proj, "a", "b", "c", "f.txt")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		b.Fatal(err)
	}
	content := strings.Repeat("line of text\n", 315) // ~4 KiB
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	s := New(Config{DataDir: filepath.Join(dir, "data")})
	call := func(b *testing.B, name string, input any) {
		in, _ := json.Marshal(input)
		res, err := s.Call(context.Background(), sdk.ToolCallRequest{SessionID: "ses_b", Name: name, Input: in, ScopeDir: proj})
		if err != nil || res.IsError {
			b.Fatalf("%s: %+v %v", name, res, err)
		}
	}
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuTime()
		for b.Loop() {
			call(b, "read", map[string]any{"path": "a/b/c/f.txt"})
		}
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	})
	b.Run("write", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		cpu := cpuTime()
		for b.Loop() {
			i++
			call(b, "write", map[string]any{"path": "a/b/c/f.txt", "content": fmt.Sprintf("%d\n%s", i, content)})
		}
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	})
}

// cpuTime is the CPU time (user + system) the process used so far, in ns:
// on a loaded shared machine it varies far less than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
