package core

import (
	"time"
)

// QueueItem is user input waiting for the session's running turn to end.
type QueueItem struct {
	ID          string       `json:"id"`
	Input       UserInput    `json:"input"`
	Attachments []Attachment `json:"attachments,omitempty"`
	CreatedAt   time.Time    `json:"createdAt"`
	// Revision counts edits of this item.
	Revision int64 `json:"revision"`
	// TextBytes is the size of the whole text; set in queue_snapshot events.
	TextBytes int `json:"textBytes,omitempty"`
	// Truncated marks a queue_snapshot item that carries a preview (see
	// snapshotItem).
	Truncated bool `json:"truncated,omitempty"`
}

// QueuePayload is the payload of the live-only queue_snapshot event.
type QueuePayload struct {
	// Revision counts every change of the session's queue.
	Revision int64       `json:"revision"`
	Items    []QueueItem `json:"items"`
}

// SendResult says what sendMessage did with the input.
type SendResult struct {
	TurnStarted bool
	QueueItem   *QueueItem
}
