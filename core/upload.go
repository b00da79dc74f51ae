package core

import (
	"io"
)

// MaxAttachmentBytes bounds one uploaded file.
const MaxAttachmentBytes = 20 << 20

// DescribeFunc sniffs a file's kind ("image" or "file"), media type and, for
// images, dimensions from its first bytes.
type DescribeFunc func(name string, r io.Reader) (kind, mediaType string, width, height int, err error)
