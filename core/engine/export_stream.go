package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
)

// exportBlob is a blob a streamed export will write.
type exportBlob struct {
	hash string
	size int64
}

// Stream writes the session as a foya.session document
// (docs/export.md) to w with no size bound, holding one page of events
// (exportPage) and one blob's stream at a time: a first pass over the log
// finds the blobs the messages refer to (so that the header can count
// them), a second writes the events, then the blobs are streamed from the
// artifact store. The document covers the events up to the head seq when
// the export started (it works while a turn runs). Once the first byte is
// written an error can only end the document early, which an import
// refuses (the header's counts).
func (ar *Archiver) Stream(ctx context.Context, sessionID string, w io.Writer) error {
	if _, err := ar.svc.Store().Session(ctx, sessionID); err != nil {
		return err
	}
	head, err := ar.svc.Store().HeadSeq(ctx, sessionID)
	if err != nil {
		return fmt.Errorf("export session %s: %w", sessionID, err)
	}
	events, blobs, err := ar.countBlobs(ctx, sessionID, head)
	if err != nil {
		return err
	}

	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	h := archive.ArchiveHeader{Format: archive.ArchiveFormat, Version: archive.ArchiveVersion, SessionID: sessionID,
		ExportedAt: time.Now().UTC(), Events: events, Blobs: len(blobs)}
	if err := enc.Encode(h); err != nil {
		return fmt.Errorf("export session %s: write header: %w", sessionID, err)
	}
	written := 0
	err = ar.exportPages(ctx, sessionID, head, func(ev *core.Event) error {
		written++
		at := ev.At
		if err := enc.Encode(archive.ArchiveLine{Kind: "event", Seq: ev.Seq, Type: ev.Type, At: &at, Payload: core.ClientPayload(ev)}); err != nil {
			return fmt.Errorf("export session %s: write event %d: %w", sessionID, ev.Seq, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if written != events {
		return fmt.Errorf("export session %s: the log changed during the export (%d events, then %d)", sessionID, events, written)
	}
	for _, b := range blobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := ar.writeBlobLine(bw, b); err != nil {
			return fmt.Errorf("export session %s: write blob %s: %w", sessionID, b.hash, err)
		}
	}
	return bw.Flush()
}

// countBlobs is Stream's first pass: it counts the events up to head and
// lists the blobs their messages refer to (attachments are required; a
// file change whose bytes are gone is left out).
func (ar *Archiver) countBlobs(ctx context.Context, sessionID string, head int64) (int, []exportBlob, error) {
	var blobs []exportBlob
	seen := map[string]bool{}
	addBlob := func(hash string, required bool, what string) error {
		if hash == "" || seen[hash] {
			return nil
		}
		seen[hash] = true
		size, err := ar.blobSize(hash)
		if err != nil || size > core.MaxAttachmentBytes {
			if required {
				if err == nil {
					err = fmt.Errorf("%d bytes, over the attachment limit", size)
				}
				return fmt.Errorf("export session %s: read the bytes of %s: %w", sessionID, what, err)
			}
			return nil // a file change whose bytes are gone: rewind could not restore it here either
		}
		blobs = append(blobs, exportBlob{hash, size})
		return nil
	}
	if ar.cfg.Blobs == nil {
		addBlob = func(hash string, required bool, what string) error {
			if hash != "" && required {
				return core.Errorf(core.CodeUnavailable, "this kernel has no artifact store: cannot export %s", what)
			}
			return nil
		}
	}
	events := 0
	err := ar.exportPages(ctx, sessionID, head, func(ev *core.Event) error {
		events++
		if ev.Seq != int64(events) {
			return fmt.Errorf("export session %s: event %d is missing from the log", sessionID, events)
		}
		return messageBlobs(ev, addBlob)
	})
	return events, blobs, err
}

// exportPages calls fn for every persisted event of the session up to
// head, reading exportPage events at a time.
func (ar *Archiver) exportPages(ctx context.Context, sessionID string, head int64, fn func(*core.Event) error) error {
	for after := int64(0); after < head; {
		page, err := ar.svc.Store().Events(ctx, sessionID, after, int(min(int64(exportPage), head-after)))
		if err != nil {
			return fmt.Errorf("export session %s: %w", sessionID, err)
		}
		if len(page) == 0 {
			return nil
		}
		for i := range page {
			if page[i].Seq > head {
				return nil
			}
			if err := fn(&page[i]); err != nil {
				return err
			}
		}
		after = page[len(page)-1].Seq
	}
	return nil
}

// blobSize is the size of a stored blob (ErrNotFound-like errors when it is
// not stored).
func (ar *Archiver) blobSize(hash string) (int64, error) {
	if o, ok := ar.cfg.Blobs.(core.BlobOpener); ok {
		rc, err := o.Open(hash)
		if err != nil {
			return 0, err
		}
		defer rc.Close()
		if st, ok := rc.(interface{ Stat() (fs.FileInfo, error) }); ok {
			if fi, err := st.Stat(); err == nil {
				return fi.Size(), nil
			}
		}
		return io.Copy(io.Discard, io.LimitReader(rc, core.MaxAttachmentBytes+1))
	}
	data, err := ar.cfg.Blobs.Read(hash)
	return int64(len(data)), err
}

// writeBlobLine writes one blob line, base64-encoding the blob as it is
// read from the store.
func (ar *Archiver) writeBlobLine(w *bufio.Writer, b exportBlob) error {
	var src io.Reader
	if o, ok := ar.cfg.Blobs.(core.BlobOpener); ok {
		rc, err := o.Open(b.hash)
		if err != nil {
			return err
		}
		defer rc.Close()
		src = rc
	} else {
		data, err := ar.cfg.Blobs.Read(b.hash)
		if err != nil {
			return err
		}
		src = bytes.NewReader(data)
	}
	if _, err := w.WriteString(`{"kind":"blob","sha256":"` + b.hash + `","size":` + strconv.FormatInt(b.size, 10) + `,"data":"`); err != nil {
		return err
	}
	enc := base64.NewEncoder(base64.StdEncoding, w)
	n, err := io.Copy(enc, io.LimitReader(src, b.size+1))
	if err != nil {
		return err
	}
	if n != b.size {
		return fmt.Errorf("the blob has %d bytes, %d when the export started", n, b.size)
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err = w.WriteString("\"}\n")
	return err
}
