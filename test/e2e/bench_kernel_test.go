package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
)

// chatSession2 creates another session on the kernel's first connection.
func (k *kernelProc) chatSession2(tb testing.TB) string {
	tb.Helper()
	return k.createSession(tb, client.CreateSessionInput{Title: ptr("t"), ApprovalMode: ptr(client.ApprovalModeBypass)})
}

// memUse is the memory of the kernel and its direct children (the plugin
// processes): the sum of their resident sets (RSS, which counts the pages of
// the shared foya executable once per process) and of their proportional
// sets (PSS, which splits shared pages between the processes that map
// them: what the processes cost the machine), in bytes, plus a per-process
// breakdown for the log.
type memUse struct {
	rss, pss int64
	// anon is the first process's (the kernel's) own anonymous memory
	anon int64
	// the children's (the plugins') sums
	childRSS, childPSS, childAnon int64
	detail                        string
}

func processMem(pid int) memUse {
	var m memUse
	for _, p := range append([]int{pid}, childPIDs(pid)...) {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/smaps_rollup")
		if err != nil {
			continue
		}
		var rss, pss, anon int64
		for _, line := range strings.Split(string(raw), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "Rss:":
				rss = kb << 10
			case "Pss:":
				pss = kb << 10
			case "Anonymous:":
				anon = kb << 10
			}
		}
		m.rss += rss
		m.pss += pss
		if p == pid {
			m.anon = anon
		} else {
			m.childRSS += rss
			m.childPSS += pss
			m.childAnon += anon
		}
		cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
		argv := strings.Fields(strings.ReplaceAll(string(cmd), "\x00", " "))
		name := ""
		if len(argv) > 0 {
			// foya serve, foya plugin openai, foya-plugin-openai
			name = strings.Join(append([]string{filepath.Base(argv[0])}, argv[1:min(3, len(argv))]...), " ")
		}
		m.detail += fmt.Sprintf(" [%s: RSS %.1f MB (anon %.1f), PSS %.1f MB]", name, float64(rss)/(1<<20), float64(anon)/(1<<20), float64(pss)/(1<<20))
	}
	return m
}

// benchPluginIdleStop is the --plugin-idle-stop of the benchmark kernels:
// shorter than the default (a minute) so that BenchmarkDeltaPathHundred
// reaches the stopped state soon. What a stopped plugin uses does not
// depend on when it stopped.
const benchPluginIdleStop = "10s"

// waitPluginsStopped waits until the kernel process k has no child process
// (its built-in plugins stopped for idleness), watching /proc rather than
// asking the kernel (a query is work for the kernel), and gives the kernel
// a second to hand memory back after the stop.
func waitPluginsStopped(ctx context.Context, tb testing.TB, k *kernelProc) {
	tb.Helper()
	for len(childPIDs(k.cmd.Process.Pid)) > 0 {
		select {
		case <-ctx.Done():
			tb.Fatalf("plugins still running: %v", childPIDs(k.cmd.Process.Pid))
		case <-time.After(100 * time.Millisecond):
		}
	}
	time.Sleep(time.Second)
}

// startBenchKernel starts `foya serve`, with --pprof on a free loopback
// port when -kernel-cpuprofile or -kernel-heapprofile is given.
func startBenchKernel(b *testing.B) (*kernelProc, string) {
	return startBenchKernelPprof(b, *kernelCPUProfile != "" || *kernelHeapProfile != "")
}

// startBenchKernelPprof is startBenchKernel with --pprof when withPprof is
// set.
func startBenchKernelPprof(b *testing.B, withPprof bool) (*kernelProc, string) {
	if *coldBinary {
		bins, _ := filepath.Glob(filepath.Join(filepath.Dir(foyaBin), "foya*")) // foya and foya-plugin-*
		for _, bin := range bins {
			if err := evictFromPageCache(bin); err != nil {
				b.Fatalf("-cold-binary: %v", err)
			}
		}
	}
	if !withPprof {
		return startKernel(b, b.TempDir(), append([]string{"--plugin-idle-stop", benchPluginIdleStop, "--max-in-flight-per-peer", "256"}, benchTelemetryArgs(b)...)...), ""
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	k := startKernel(b, b.TempDir(), append([]string{"--pprof", addr, "--plugin-idle-stop", benchPluginIdleStop, "--max-in-flight-per-peer", "256"}, benchTelemetryArgs(b)...)...)
	kernelTokens.add(addr, k.token) // the profile endpoint asks for the token too
	b.Cleanup(func() { kernelTokens.remove(addr) })
	return k, addr
}

// fetchProfile writes the kernel's /debug/pprof/<name> to path.
func fetchProfile(addr, name, path string) error {
	resp, err := http.Get("http://" + addr + "/debug/pprof/" + name)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// profileKernel takes a 10-second CPU profile of the kernel (a 3-second
// execution trace when path ends in .trace) through its --pprof server
// while work runs in a loop, and writes it to path. When path ends in
// .allocs it writes what the kernel allocated instead: its allocation
// profile before and after 10 seconds of work, to path.base and path
// (go tool pprof -sample_index=alloc_space -base path.base path; the
// kernel samples an allocation every 4 KiB under --pprof).
func profileKernel(ctx context.Context, tb testing.TB, addr, path string, work func()) {
	if strings.HasSuffix(path, ".allocs") {
		if err := fetchProfile(addr, "allocs", path+".base"); err != nil {
			tb.Errorf("kernel allocation profile: %v", err)
			return
		}
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
			work()
		}
		if err := fetchProfile(addr, "allocs", path); err != nil {
			tb.Errorf("kernel allocation profile: %v", err)
			return
		}
		tb.Logf("kernel allocation profiles written to %s.base and %s (go tool pprof -sample_index=alloc_space -base)", path, path)
		return
	}
	endpoint := "profile?seconds=10"
	if strings.HasSuffix(path, ".trace") {
		endpoint = "trace?seconds=3" // an execution trace: go tool trace
	}
	done := make(chan error, 1)
	go func() { done <- fetchProfile(addr, endpoint, path) }()
	for {
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("kernel profile: %v", err)
				return
			}
			tb.Logf("kernel profile written to %s (go tool pprof -top, or go tool trace for a .trace)", path)
			return
		default:
			work()
		}
	}
}

// freeLoopbackAddr returns a loopback address with a port free right now.
func freeLoopbackAddr(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// profilePlugin writes what the kernel's plugin process serves on its
// FOYA_PLUGIN_PPROF address (heap profile, goroutine stacks, runtime
// memory figures) and its /proc smaps to files named prefix.*, once the
// plugin runs at least goroutines goroutines (every stream in progress) or
// after wait.
func profilePlugin(tb testing.TB, k *kernelProc, addr, prefix string, goroutines int, wait time.Duration) {
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/debug/metrics")
		if err != nil {
			continue
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		_, after, _ := strings.Cut(string(raw), "goroutines:goroutines=")
		if n, _ := strconv.Atoi(strings.TrimSpace(after)); n >= goroutines {
			break
		}
	}
	// smaps first: taking a profile touches pages of the executable.
	for _, pid := range childPIDs(k.cmd.Process.Pid) {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps")
		if err == nil {
			err = os.WriteFile(prefix+".smaps.txt", raw, 0o644)
		}
		if err != nil {
			tb.Errorf("plugin smaps: %v", err)
		}
	}
	for name, path := range map[string]string{
		"heap": prefix + ".heap", "heap?debug=1": prefix + ".heap.txt", "goroutine?debug=1": prefix + ".goroutines.txt",
		"../metrics": prefix + ".metrics.txt",
	} {
		if err := fetchProfile(addr, name, path); err != nil {
			tb.Errorf("plugin profile %s: %v", name, err)
		}
	}
	tb.Logf("plugin profiles written to %s.*: go tool pprof -sample_index=inuse_space -top %s.heap; plugin figures: %s", prefix, prefix, strings.TrimSpace(readFile(tb, prefix+".metrics.txt")))
}

// childrenCPU is the CPU time (user + system) the direct children of pid
// (the plugin processes) have used so far.
func childrenCPU(pid int) time.Duration {
	var sum time.Duration
	for _, p := range childPIDs(pid) {
		sum += processCPU(p)
	}
	return sum
}

// processCPU is the CPU time (user + system) process pid has used so far,
// in ticks of 10 ms (USER_HZ); 0 when it is gone.
func processCPU(pid int) time.Duration {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) <= 12 { // state is field 3 of stat; utime and stime 14 and 15
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * time.Second / 100
}
