package core

import (
	"context"
)

// AttachmentStore keeps attachment metadata (MSG-3). The bytes live in the
// artifact store under Attachment.SHA256; this store holds only the record
// that user input refers to by id.
type AttachmentStore interface {
	// CreateAttachment records a; an existing id is a CONFLICT.
	CreateAttachment(ctx context.Context, a Attachment) error
	// Attachment returns the record with the given id; NOT_FOUND when missing.
	Attachment(ctx context.Context, id string) (Attachment, error)
}
