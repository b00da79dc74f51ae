package engine

import (
	"github.com/foya-dev/foya/core"
)

// Bounds of a session's queue (in memory until the running turn ends).
const (
	// MaxQueueItems is the most input one session may hold queued.
	MaxQueueItems = 100
	// MaxQueueInputBytes bounds the input bytes (text and browser elements)
	// queued in one session.
	MaxQueueInputBytes = 4 << 20
	// QueueSnapshotInlineBytes is the largest item input a queue_snapshot
	// event carries whole; a larger item carries a preview:
	// QueuePreviewBytes of its text and no browser elements (Truncated).
	QueueSnapshotInlineBytes = 4 << 10
	// QueuePreviewBytes is the length of the text preview of a truncated
	// queue_snapshot item.
	QueuePreviewBytes = 2 << 10
)

// inputBytes is the size of an input as the queue bounds count it: its
// text and all fields of its browser elements.
func inputBytes(in core.UserInput) int {
	n := len(in.Text) + len(in.Command)
	for _, el := range in.BrowserElements {
		n += len(el.URL) + len(el.Title) + len(el.Tag) + len(el.Selector) + len(el.Text) + len(el.HTML)
	}
	return n
}

func queuedBytes(q []*core.QueueItem) int {
	n := 0
	for _, it := range q {
		n += inputBytes(it.Input)
	}
	return n
}

// checkQueueRoom refuses a new item of size bytes on a queue that is full;
// replacing (when not nil) is an item the new input replaces.
func checkQueueRoom(sessionID string, q []*core.QueueItem, size int, replacing *core.QueueItem) error {
	if replacing == nil && len(q) >= MaxQueueItems {
		return core.Errorf(core.CodeBadInput, "queue: session %s already holds %d queued messages, the limit per session (MaxQueueItems); wait for the running turn, or edit or delete queued messages", sessionID, MaxQueueItems)
	}
	total := queuedBytes(q) + size
	if replacing != nil {
		total -= inputBytes(replacing.Input)
	}
	if total > MaxQueueInputBytes {
		return core.Errorf(core.CodeBadInput, "queue: this input (%d bytes) would bring the queued input of session %s to %d bytes, over the limit of 4 MiB (%d bytes) per session; wait for the running turn, or edit or delete queued messages", size, sessionID, total, MaxQueueInputBytes)
	}
	return nil
}

// snapshotItem is it as a queue_snapshot event carries it: whole when its
// input is at most QueueSnapshotInlineBytes, else a text preview without
// browser elements (Session.queue has the whole item).
func snapshotItem(it core.QueueItem) core.QueueItem {
	it.TextBytes = len(it.Input.Text)
	if inputBytes(it.Input) <= QueueSnapshotInlineBytes {
		return it
	}
	it.Truncated = true
	it.Input.Text = core.Truncate(it.Input.Text, QueuePreviewBytes, "")
	it.Input.BrowserElements = nil
	return it
}
