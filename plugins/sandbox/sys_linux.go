package sandbox

import (
	"errors"
	"os"
	"syscall"
)

const capSysAdmin = 21

func sysProcAttr(p Policy) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if p.Namespaces {
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
		if !p.Exec {
			a.Cloneflags |= syscall.CLONE_NEWPID
		}
		if !p.Network {
			a.Cloneflags |= syscall.CLONE_NEWNET
		}
		// The caller's ids map to themselves; CAP_SYS_ADMIN (in the new
		// namespace only) survives the exec as an ambient capability so
		// the helper can mount, and the helper drops it before the command.
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		a.AmbientCaps = []uintptr{capSysAdmin}
	}
	return a
}

// isNamespaceRefusal reports whether err is the kernel refusing clone with
// new namespaces (disabled, limited or not permitted).
func isNamespaceRefusal(err error) bool {
	for _, e := range []error{syscall.EPERM, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS, syscall.EACCES} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Supported reports whether this system can run confined commands at all.
func Supported() bool { return true }
