package core

import (
	"context"
)

// SessionImporter writes an imported session: its events (seqs from 1),
// their projections and the attachment records they refer to, in one
// transaction; usage events go to the ledger marked as imported (they count
// in the session's usage, not in the kernel's totals).
type SessionImporter interface {
	ImportSession(ctx context.Context, sessionID string, events []Event, attachments []Attachment) ([]Event, error)
}
