//go:build !linux

package sdk

import "runtime"

// yieldCPU lets this process's other goroutines run (the gRPC writer).
func yieldCPU() { runtime.Gosched() }
