package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/foya-dev/foya/core"
)

// UploadAttachment stores a file in the artifact store, content-addressed by
// SHA-256, and records an attachment that user input can refer to (MSG-3).
func (e *Engine) UploadAttachment(ctx context.Context, name string, r io.Reader) (core.Attachment, error) {
	if e.cfg.Blobs == nil || e.cfg.Attachments == nil || e.cfg.Describe == nil {
		return core.Attachment{}, core.Errorf(core.CodeUnavailable, "this kernel has no artifact store")
	}
	name = filepath.Base(strings.TrimSpace(name))
	if name == "" || name == "." || name == "/" {
		name = "attachment"
	}
	hash, size, err := e.cfg.Blobs.Put(ctx, r, core.MaxAttachmentBytes)
	if err != nil {
		return core.Attachment{}, fmt.Errorf("store attachment: %w", err)
	}
	// Describe reads only the start of the file (its type and an image's
	// header): stream it from the store rather than hold up to 20 MiB.
	var src io.Reader
	if o, ok := e.cfg.Blobs.(core.BlobOpener); ok {
		rc, err := o.Open(hash)
		if err != nil {
			return core.Attachment{}, fmt.Errorf("open stored attachment: %w", err)
		}
		defer rc.Close()
		src = rc
	} else {
		data, err := e.cfg.Blobs.Read(hash)
		if err != nil {
			return core.Attachment{}, fmt.Errorf("read stored attachment: %w", err)
		}
		src = bytes.NewReader(data)
	}
	kind, mediaType, w, h, err := e.cfg.Describe(name, src)
	if err != nil {
		return core.Attachment{}, fmt.Errorf("describe attachment: %w", err)
	}
	a := core.Attachment{ID: core.NewID("att"), Name: name, Kind: kind, MediaType: mediaType, Size: size, Width: w, Height: h, SHA256: hash}
	if err := e.cfg.Attachments.CreateAttachment(ctx, a); err != nil {
		return core.Attachment{}, err
	}
	return a, nil
}

// OpenAttachment returns the record of the attachment id and its stored
// bytes, read from the artifact store's file (the caller closes it).
// NOT_FOUND for an unknown id, or for bytes missing from the store.
func (e *Engine) OpenAttachment(ctx context.Context, id string) (core.Attachment, io.ReadSeekCloser, error) {
	opener, ok := e.cfg.Blobs.(core.BlobOpener)
	if e.cfg.Attachments == nil || !ok {
		return core.Attachment{}, nil, core.Errorf(core.CodeUnavailable, "this kernel has no artifact store")
	}
	a, err := e.cfg.Attachments.Attachment(ctx, id)
	if err != nil {
		return core.Attachment{}, nil, err
	}
	rc, err := opener.Open(a.SHA256)
	if err != nil {
		return core.Attachment{}, nil, fmt.Errorf("open attachment %s: %w", id, err)
	}
	f, ok := rc.(io.ReadSeekCloser)
	if !ok {
		rc.Close()
		return core.Attachment{}, nil, core.Errorf(core.CodeUnavailable, "this kernel's artifact store cannot serve byte ranges")
	}
	return a, f, nil
}
