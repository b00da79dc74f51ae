package tools

import "golang.org/x/sys/unix"

// dataDirMasked reports whether dir is, in this process's mount namespace,
// the empty read-only tmpfs the sandbox helper mounts over hidden
// directories (the tools plugin started by the kernel where user
// namespaces work).
func dataDirMasked(dir string) bool {
	var st unix.Statfs_t
	if dir == "" || unix.Statfs(dir, &st) != nil {
		return false
	}
	return st.Type == unix.TMPFS_MAGIC && st.Flags&unix.ST_RDONLY != 0
}
