package core

import (
	"context"
	"io"
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

// BlobStore is the content-addressed artifact store.
type BlobStore interface {
	Put(ctx context.Context, r io.Reader, maxSize int64) (hash string, size int64, err error)
	Read(hash string) ([]byte, error)
	Delete(hash string) error
}

// BlobOpener is a BlobStore that can stream a blob (the artifact store).
type BlobOpener interface {
	Open(hash string) (io.ReadCloser, error)
}

// MaxAttachmentBytes bounds one uploaded file.
const MaxAttachmentBytes = 20 << 20

// DescribeFunc sniffs a file's kind ("image" or "file"), media type and, for
// images, dimensions from its first bytes.
type DescribeFunc func(name string, r io.Reader) (kind, mediaType string, width, height int, err error)
