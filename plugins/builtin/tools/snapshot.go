package tools

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"
)

// skipDirs are never walked: by snapshots, glob or grep.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

// snapEntry is one regular file in a snapshot.
type snapEntry struct {
	size  int64
	mtime time.Time
	state fileState
}

// snapshot is the regular files under a scope, keyed by slash path relative
// to it.
type snapshot map[string]snapEntry

// errSnapshotLimit means the tree is over a snapshot limit; its message says
// which.
type errSnapshotLimit struct{ msg string }

func (e *errSnapshotLimit) Error() string { return e.msg }

// takeSnapshot records size, mtime and sha256 of every regular file of
// the scope, skipping skipDirs, the hidden directories and symlinks, and
// keeps the bytes of files up to maxFile; every file and directory is
// opened through the scope's root (rootfs.go). A file whose size and mtime
// match its entry in prev reuses it unread. Over maxFiles files or
// maxBytes total it returns *errSnapshotLimit.
func takeSnapshot(ctx context.Context, sc *scope, prev snapshot, maxFiles int, maxBytes, maxFile int64) (snapshot, error) {
	type found struct {
		rel   string
		size  int64
		mtime time.Time
	}
	var files []found
	var total int64
	_, err := sc.walk(ctx, ".", 0, func(e walkEntry) error {
		if len(files) >= maxFiles {
			return &errSnapshotLimit{fmt.Sprintf("more than %d files", maxFiles)}
		}
		total += e.info.Size()
		if total > maxBytes {
			return &errSnapshotLimit{"more than " + sizeText(maxBytes) + " of files"}
		}
		files = append(files, found{rel: e.rel, size: e.info.Size(), mtime: e.info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	snap := make(snapshot, len(files))
	for i, f := range files {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if e, ok := prev[f.rel]; ok && e.size == f.size && e.mtime.Equal(f.mtime) {
			snap[f.rel] = e
			continue
		}
		st, err := sc.readStateAt(f.rel, maxFile)
		if err != nil || !st.exists {
			continue // vanished or unreadable meanwhile
		}
		snap[f.rel] = snapEntry{size: f.size, mtime: f.mtime, state: st}
	}
	return snap, nil
}

// compareSnapshots adds every file that differs between before and after to
// cs, in path order.
func compareSnapshots(cs *changeSet, before, after snapshot) {
	paths := make([]string, 0, len(after))
	for p := range after {
		paths = append(paths, p)
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		cs.add(p, before[p].state, after[p].state)
	}
}

func isSnapshotLimit(err error) (*errSnapshotLimit, bool) {
	var e *errSnapshotLimit
	return e, errors.As(err, &e)
}
