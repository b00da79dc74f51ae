package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/internal/memtrim"
)

// exePmdMapped is how much of the executable process pid maps in 2 MiB
// page-cache folios (FilePmdMapped in its smaps), and its resident size.
func exePmdMapped(t *testing.T, pid int, exe string) (pmd, rss int64) {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps")
	if err != nil {
		t.Fatal(err)
	}
	mine := false
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			mine = len(f) >= 6 && f[len(f)-1] == exe
			continue
		}
		if !mine || len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "FilePmdMapped:":
			pmd += kb << 10
		case "Rss:":
			rss += kb << 10
		}
	}
	return pmd, rss
}

// TestKernelEvictsLargeFolios: a kernel whose executable the page cache
// holds in 2 MiB folios (a copy written with one write, as `cp` or an
// installer leaves it) maps nearly all of it; once idle (5 s without a
// turn) it drops its mappings and evicts the file's unmapped pages, so
// that what it runs afterwards comes back in small folios — and it keeps
// answering (docs/performance.md, internal/memtrim).
func TestKernelEvictsLargeFolios(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "foya")
	installBuilt(t, "foya", bin)
	k := startKernelBin(t, bin, t.TempDir())
	pid := k.cmd.Process.Pid
	startPmd, startRss := exePmdMapped(t, pid, bin)
	if startPmd == 0 {
		t.Skip("the page cache holds the copied executable in small folios: nothing to evict on this machine")
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		pmd, rss := exePmdMapped(t, pid, bin)
		if pmd <= startPmd/2 && rss < startRss {
			t.Logf("executable mapped by PMD %d → %d MiB, resident %d → %d MiB", startPmd>>20, pmd>>20, startRss>>20, rss>>20)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s the kernel still maps %d MiB of its executable by PMD (%d MiB at start), resident %d MiB", pmd>>20, startPmd>>20, rss>>20)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := k.listSessions(t, false); got == nil {
		t.Fatal("no answer after the eviction")
	}
}

// TestKernelFaultsItsExecutableAPageAtATime: once idle, the kernel turns
// fault-around off on its mappings of its executable (internal/memtrim),
// so that a function it runs afterwards costs it one page, not 64 KiB, and
// it keeps answering.
func TestKernelFaultsItsExecutableAPageAtATime(t *testing.T) {
	t.Parallel()
	if err := memtrim.ExactFaultsSupported(); err != nil {
		t.Skipf("not on this machine: %v", err)
	}
	k := startKernel(t, t.TempDir())
	pid := k.cmd.Process.Pid
	deadline := time.Now().Add(60 * time.Second)
	registered := func() int {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps")
		if err != nil {
			t.Fatal(err)
		}
		return memtrim.RegisteredMappings(raw, foyaBin)
	}
	for registered() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("after 60 s no mapping of the kernel's executable has fault-around off (no \"uw\" in its VmFlags)")
		}
		time.Sleep(200 * time.Millisecond)
	}
	for range 3 {
		if got := k.listSessions(t, false); got == nil {
			t.Fatal("no answer with fault-around off")
		}
	}
}
