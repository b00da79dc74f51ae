package core

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// MaxAttachmentBytes bounds one uploaded file.
const MaxAttachmentBytes = 20 << 20

// DescribeFunc sniffs a file's kind ("image" or "file"), media type and, for
// images, dimensions from its first bytes.
type DescribeFunc func(name string, r io.Reader) (kind, mediaType string, width, height int, err error)

// UploadAttachment stores a file in the artifact store, content-addressed by
// SHA-256, and records an attachment that user input can refer to (MSG-3).
func (e *Engine) UploadAttachment(ctx context.Context, name string, r io.Reader) (Attachment, error) {
	if e.cfg.Blobs == nil || e.cfg.Attachments == nil || e.cfg.Describe == nil {
		return Attachment{}, Errorf(CodeUnavailable, "this kernel has no artifact store")
	}
	name = filepath.Base(strings.TrimSpace(name))
	if name == "" || name == "." || name == "/" {
		name = "attachment"
	}
	hash, size, err := e.cfg.Blobs.Put(ctx, r, MaxAttachmentBytes)
	if err != nil {
		return Attachment{}, fmt.Errorf("store attachment: %w", err)
	}
	data, err := e.cfg.Blobs.Read(hash)
	if err != nil {
		return Attachment{}, fmt.Errorf("read stored attachment: %w", err)
	}
	kind, mediaType, w, h, err := e.cfg.Describe(name, bytes.NewReader(data))
	if err != nil {
		return Attachment{}, fmt.Errorf("describe attachment: %w", err)
	}
	a := Attachment{ID: NewID("att"), Name: name, Kind: kind, MediaType: mediaType, Size: size, Width: w, Height: h, SHA256: hash}
	if err := e.cfg.Attachments.CreateAttachment(ctx, a); err != nil {
		return Attachment{}, err
	}
	return a, nil
}
