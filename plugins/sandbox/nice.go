package sandbox

import (
	"fmt"
	"sync/atomic"
)

// MaxChildNice is the largest --child-nice: 19 is the lowest priority.
const MaxChildNice = 19

// childNice is the nice value children get (SetChildNice); -1: unset, the
// children keep the kernel's priority.
var childNice atomic.Int32

func init() { childNice.Store(-1) }

// SetChildNice makes every process the kernel starts from now on (plugins,
// and through LowerPriority tool commands, hooks, STDIO MCP servers and
// terminals) run n nice levels below the kernel itself, at most at 19, so
// that the kernel's own threads (the API, the streams it forwards) get the
// CPU first when a child keeps it busy. n = 0 turns it off. It is set once,
// by foya serve (--child-nice); a plugin process never sets it, so a tool
// command inherits its plugin's level rather than going lower again.
func SetChildNice(n int) error {
	if n < 0 || n > MaxChildNice {
		return fmt.Errorf("child nice %d: expected 0 to %d", n, MaxChildNice)
	}
	if n == 0 {
		childNice.Store(-1)
		return nil
	}
	own, err := ownNice()
	if err != nil {
		return fmt.Errorf("read the kernel's nice value: %w", err)
	}
	childNice.Store(int32(min(own+n, MaxChildNice)))
	return nil
}

// LowerPriority sets the nice value of SetChildNice on every thread of the
// process group pid leads (a child started with Setpgid, as every child of
// the kernel is). Threads the child creates later inherit it from the one
// that creates them. Without SetChildNice it does nothing.
func LowerPriority(pid int) error {
	n := childNice.Load()
	if n < 0 || pid <= 0 {
		return nil
	}
	if err := setGroupNice(pid, int(n)); err != nil {
		return fmt.Errorf("lower the priority of process %d to nice %d: %w", pid, n, err)
	}
	return nil
}
