package core

import (
	"io"
)

// BlobOpener is a BlobStore that can stream a blob (the artifact store).
type BlobOpener interface {
	Open(hash string) (io.ReadCloser, error)
}
