package core

import (
	"context"
	"io"
)

// BlobStore is the content-addressed artifact store.
type BlobStore interface {
	Put(ctx context.Context, r io.Reader, maxSize int64) (hash string, size int64, err error)
	Read(hash string) ([]byte, error)
	Delete(hash string) error
}
