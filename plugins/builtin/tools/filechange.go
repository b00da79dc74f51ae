package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
)

// fileState is one side of a file change.
type fileState struct {
	exists bool
	data   []byte // nil when the file is over the size cap
	hash   string // sha256 hex of the full contents
	size   int64
	mode   uint32 // permission bits
}

func stateOf(data []byte) fileState {
	sum := sha256.Sum256(data)
	return fileState{exists: true, data: data, hash: hex.EncodeToString(sum[:]), size: int64(len(data))}
}

// changeSet collects a call's file changes and their diff within the byte
// budgets.
type changeSet struct {
	maxFile  int64
	budget   int64 // bytes left for before/after contents
	maxDiff  int
	changes  []sdk.FileChange
	diff     strings.Builder
	diffFull bool
}

func newChangeSet(cfg Config) *changeSet {
	return &changeSet{maxFile: cfg.MaxFileBytes, budget: cfg.MaxResultBytes, maxDiff: DefaultMaxDiffBytes}
}

// add records the change of rel from before to after; equal states are no
// change.
func (cs *changeSet) add(rel string, before, after fileState) {
	if before.exists == after.exists && before.hash == after.hash {
		return
	}
	c := sdk.FileChange{Path: rel, Action: sdk.FileModify, BeforeSHA256: before.hash, AfterSHA256: after.hash, BeforeMode: before.mode}
	switch {
	case !before.exists:
		c.Action = sdk.FileCreate
	case !after.exists:
		c.Action = sdk.FileDelete
	}
	c.Before, c.TooLarge = cs.take(before, c.TooLarge)
	c.After, c.TooLarge = cs.take(after, c.TooLarge)
	cs.changes = append(cs.changes, c)
	cs.addDiff(rel, before, after)
}

// take returns the bytes of s to carry, or marks them omitted.
func (cs *changeSet) take(s fileState, tooLarge bool) ([]byte, bool) {
	if !s.exists {
		return nil, tooLarge
	}
	if s.data == nil || s.size > cs.maxFile || s.size > cs.budget {
		return nil, true
	}
	cs.budget -= s.size
	return s.data, tooLarge
}

func (cs *changeSet) addDiff(rel string, before, after fileState) {
	if cs.diffFull {
		return
	}
	var d string
	if (before.exists && before.data == nil) || (after.exists && after.data == nil) {
		d = diffHeader(rel, before.exists, after.exists) + tooLargeLine
	} else {
		d = unifiedDiff(rel, before.data, after.data, before.exists, after.exists)
	}
	if cs.diff.Len()+len(d) > cs.maxDiff {
		cs.diff.WriteString(fmt.Sprintf("# diff truncated: over %d bytes\n", cs.maxDiff))
		cs.diffFull = true
		return
	}
	cs.diff.WriteString(d)
}

// result fills r's file changes and diff.
func (cs *changeSet) result(r sdk.ToolResult) sdk.ToolResult {
	r.FileChanges = cs.changes
	r.Diff = cs.diff.String()
	return r
}
