package sandbox

import "syscall"

// ownNice is the calling thread's nice value (the raw getpriority returns
// 20 - nice).
func ownNice() (int, error) {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		return 0, err
	}
	return 20 - p, nil
}

// setGroupNice sets nice n on every thread of every process in process
// group pgid (Linux's PRIO_PGRP walks the threads, PRIO_PROCESS names one).
func setGroupNice(pgid, n int) error {
	return syscall.Setpriority(syscall.PRIO_PGRP, pgid, n)
}
