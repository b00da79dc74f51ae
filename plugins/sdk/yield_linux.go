package sdk

import (
	"runtime"
	"syscall"
)

// yieldCPU lets this process's other goroutines run (the gRPC writer),
// then gives this thread's CPU to whatever else waits for it (sched_yield),
// such as the kernel thread woken by the frame just written.
func yieldCPU() {
	runtime.Gosched()
	_, _, _ = syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
}
