//go:build !linux

package sandbox

// Off Linux children keep the kernel's priority (--child-nice is accepted
// and does nothing).
func ownNice() (int, error) { return 0, nil }

func setGroupNice(int, int) error { return nil }
