package sandbox

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// limitsCommand is the first argument of the stage that applies Limits and
// then executes the command (`<exe> __sandbox_limits LIMITS PATH ARGV...`).
// The helper cannot lower its own limits without risking itself (a fork
// bomb at the process limit would stop the Go runtime making threads), so
// a short-lived stage between it and the command does.
const limitsCommand = "__sandbox_limits"

// Limits bound what a confined command and everything it starts may use.
// Zero fields are no limit. They are POSIX resource limits (setrlimit), so
// each holds per process except Procs and CPUSeconds; see docs/sandbox.md.
type Limits struct {
	// Procs is the most processes (Linux counts threads) the command and
	// its descendants may have at once (RLIMIT_NPROC). With user
	// namespaces only the sandbox's own are counted; without, every
	// process of the user, so the limit is set to the user's count at
	// start plus Procs. Root outside a user namespace is exempt.
	Procs int `json:"procs,omitempty"`
	// AddressSpace is the most virtual memory one process may map, in
	// bytes (RLIMIT_AS).
	AddressSpace uint64 `json:"addressSpace,omitempty"`
	// FileSize is the largest file one process may write, in bytes
	// (RLIMIT_FSIZE): a write beyond it fails with EFBIG (the process gets
	// SIGXFSZ, which kills it unless ignored).
	FileSize uint64 `json:"fileSize,omitempty"`
	// CPUSeconds is the CPU time the whole call may use, every process it
	// starts included: the helper measures it (a cgroup's usage, else
	// /proc) and kills them all when it is used up (Report.CPUExceeded).
	// Each process also gets it as RLIMIT_CPU.
	CPUSeconds uint64 `json:"cpuSeconds,omitempty"`
}

// Defaults of `foya serve` (docs/sandbox.md says why).
const (
	DefaultMaxProcs      = 4096
	DefaultMaxFileSize   = 4 << 30
	DefaultMaxCPUSeconds = 600
	// DefaultMaxAddressSpace is 0: off. RLIMIT_AS counts reserved
	// address space, not memory: Node.js and Go reserve far more than
	// they use, so any value low enough to bound memory breaks them.
	DefaultMaxAddressSpace = 0
)

// DefaultLimits are the limits of a bash call unless `foya serve` says
// otherwise.
func DefaultLimits() Limits {
	return Limits{Procs: DefaultMaxProcs, FileSize: DefaultMaxFileSize, CPUSeconds: DefaultMaxCPUSeconds, AddressSpace: DefaultMaxAddressSpace}
}

// IsZero reports whether l limits nothing.
func (l Limits) IsZero() bool { return l == Limits{} }

// ParseSize reads a byte count for a flag: "off" or "0" (no limit), a
// number of bytes, or a number with a K, M, G or T suffix (powers of 1024,
// an optional "iB" or "B" after it).
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	if t == "off" || t == "" {
		return 0, nil
	}
	u := strings.ToUpper(t)
	u = strings.TrimSuffix(strings.TrimSuffix(u, "B"), "I")
	mult := uint64(1)
	if n := len(u); n > 0 {
		switch u[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			u = u[:n-1]
		}
	}
	v, err := strconv.ParseUint(strings.TrimSpace(u), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size: use a number of bytes with an optional K, M, G or T suffix, or off", s)
	}
	if v > (1<<63)/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return v * mult, nil
}

// Describe says what l bounds, for a plugin's sandboxDetail; how names
// the mechanism enforcing Procs (Report.ProcLimit).
func (l Limits) Describe(how string) string {
	var parts []string
	if l.Procs > 0 {
		p := fmt.Sprintf("%d processes", l.Procs)
		if how != "" {
			p += " (" + how + ")"
		}
		parts = append(parts, p)
	}
	if l.FileSize > 0 {
		parts = append(parts, "files up to "+sizeText(l.FileSize))
	}
	if l.CPUSeconds > 0 {
		parts = append(parts, fmt.Sprintf("%d s of CPU per call", l.CPUSeconds))
	}
	if l.AddressSpace > 0 {
		parts = append(parts, sizeText(l.AddressSpace)+" of address space per process")
	}
	if len(parts) == 0 {
		return "no resource limits"
	}
	return "limits: " + strings.Join(parts, ", ")
}

// CPUExceededText is how a tool reports a call stopped by its CPU budget
// (Report.CPUExceeded).
func CPUExceededText(seconds uint64) string {
	return fmt.Sprintf("CPU time limit of %s for this call exceeded; the command and every process it started were killed", time.Duration(seconds)*time.Second)
}

func sizeText(n uint64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
