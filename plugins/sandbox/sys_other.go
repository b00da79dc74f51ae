//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"syscall"
)

func sysProcAttr(Policy) *syscall.SysProcAttr { return nil }

func isNamespaceRefusal(error) bool { return false }

func helperMain([]string) int {
	fmt.Fprintln(os.Stderr, "foya sandbox: only available on Linux")
	return 126
}

// Supported reports whether this system can run confined commands at all.
func Supported() bool { return false }

func limitsMain([]string) int {
	fmt.Fprintln(os.Stderr, "foya sandbox: only available on Linux")
	return 126
}
