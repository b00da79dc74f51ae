package archive

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/foya-dev/foya/core"
)

// The foya.session document (docs/export.md): JSON Lines, one header line,
// then every persisted event of one session in seq order, then the stored
// bytes its messages refer to. Version 1.
const (
	ArchiveFormat  = "foya.session"
	ArchiveVersion = 1
)

// Bounds of a foya.session document a kernel reads (docs/export.md). An
// import is untrusted input: anything beyond them is refused with BAD_INPUT
// naming the line.
const (
	// MaxArchiveBytes bounds a whole document read into memory
	// (ParseSessionArchive), and the event lines of any document: an import
	// holds the events to write them in one transaction.
	MaxArchiveBytes = 64 << 20
	// MaxImportBytes bounds a whole document an import streams
	// (StreamSessionArchive): its blobs are handed on one at a time, so
	// memory stays bounded by one blob line.
	MaxImportBytes = 1 << 30
	// MaxArchiveEventLine bounds one header or event line.
	MaxArchiveEventLine = 8 << 20
	// MaxArchiveBlobLine bounds one blob line: a blob of MaxAttachmentBytes
	// in base64 plus its envelope.
	MaxArchiveBlobLine = core.MaxAttachmentBytes/3*4 + 4<<10
	// MaxArchiveEvents bounds the events of one document.
	MaxArchiveEvents = 200_000
	// MaxArchiveBlobs bounds the blobs of one document.
	MaxArchiveBlobs = 10_000
)

// ArchiveHeader is the first line of a foya.session document.
type ArchiveHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// SessionID is the id of the exported session (the importer records it
	// in the new session's source as import:<id>).
	SessionID  string    `json:"sessionId"`
	ExportedAt time.Time `json:"exportedAt"`
	// Events and Blobs count the lines that follow, so that a truncated
	// document is refused.
	Events int `json:"events"`
	Blobs  int `json:"blobs"`
}

// ArchiveLine is an event or blob line.
type ArchiveLine struct {
	Kind string `json:"kind"` // "event" or "blob"
	// Event lines.
	Seq     int64           `json:"seq,omitempty"`
	Type    core.EventType  `json:"type,omitempty"`
	At      *time.Time      `json:"at,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	// Blob lines.
	SHA256 string `json:"sha256,omitempty"`
	Size   *int64 `json:"size,omitempty"`
	Data   string `json:"data,omitempty"`
}

// SessionArchive is a parsed and validated foya.session document.
type SessionArchive struct {
	Header ArchiveHeader
	// Events are in seq order from 1, with payloads re-encoded from their
	// typed form where the kernel has one (no provider-native state).
	Events []core.Event
	// Blobs are the stored bytes by SHA-256 (lowercase hex).
	Blobs map[string][]byte
	// BlobOrder lists the blob hashes in document order.
	BlobOrder []string
	// BlobSizes are the blobs' sizes by hash (also when the bytes were
	// handed to a sink instead of kept in Blobs).
	BlobSizes map[string]int64
	// FileChanges are the file changes the messages record, with the line
	// that holds each, for the checks an import makes against the project
	// it binds the session to (CheckArchiveFileChanges).
	FileChanges []ArchiveFileChange
}

// ArchiveFileChange is one file change of a document and where it is.
type ArchiveFileChange struct {
	Line  int // the document line of its message
	Index int // its index in the message's fileChanges
	Path  string
}

// archiveEventTypes are the persisted event types a version 1 document may
// hold.
var archiveEventTypes = map[core.EventType]bool{
	core.EventSessionCreated: true, core.EventSessionUpdated: true, core.EventPhaseChanged: true, core.EventTurnStarted: true,
	core.EventMessageEnd: true, core.EventMessageImported: true, core.EventToolStarted: true, core.EventApprovalRequested: true,
	core.EventApprovalResolved: true, core.EventQuestionRequested: true, core.EventQuestionAnswered: true, core.EventUsage: true,
	core.EventTurnFinished: true, core.EventHistoryRewound: true, core.EventCompactionStarted: true,
	core.EventCompactionCheckpoint: true, core.EventHookStarted: true, core.EventHookFinished: true, core.EventHookUntrusted: true,
	core.EventRouteFallback:   true,
	core.EventGuardianVerdict: true,
	core.EventTerminalStarted: true, core.EventTerminalExited: true,
}

// WriteSessionArchive writes a foya.session document: the header, events
// (in seq order, with their client payloads: provider-native state left
// out) and blobs (in the order given).
func WriteSessionArchive(w io.Writer, h ArchiveHeader, events []core.Event, blobOrder []string, blobs map[string][]byte) error {
	h.Format, h.Version, h.Events, h.Blobs = ArchiveFormat, ArchiveVersion, len(events), len(blobOrder)
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(h); err != nil {
		return fmt.Errorf("write header: %w", err)
	}
	for i := range events {
		ev := &events[i]
		at := ev.At
		if err := enc.Encode(ArchiveLine{Kind: "event", Seq: ev.Seq, Type: ev.Type, At: &at, Payload: core.ClientPayload(ev)}); err != nil {
			return fmt.Errorf("write event %d: %w", ev.Seq, err)
		}
	}
	for _, hash := range blobOrder {
		data := blobs[hash]
		size := int64(len(data))
		if err := enc.Encode(ArchiveLine{Kind: "blob", SHA256: hash, Size: &size, Data: base64.StdEncoding.EncodeToString(data)}); err != nil {
			return fmt.Errorf("write blob %s: %w", hash, err)
		}
	}
	return bw.Flush()
}

// ArchiveError is a BAD_INPUT naming the line.
func ArchiveError(line int, format string, args ...any) error {
	return core.Errorf(core.CodeBadInput, "line %d: %s", line, fmt.Sprintf(format, args...))
}

// ParseSessionArchive reads and validates a foya.session document from r,
// reading at most MaxArchiveBytes and keeping the blobs in Blobs. Every
// problem is a BAD_INPUT naming the line (1 is the header). It checks the
// structure and every field the kernel relies on: the header, consecutive
// seqs from 1 with session_created first, known event types, payloads of
// the known shapes, blobs whose bytes match their hash and size, every
// attachment's bytes present and no blob that nothing refers to.
func ParseSessionArchive(r io.Reader) (*SessionArchive, error) {
	a := &SessionArchive{Blobs: map[string][]byte{}}
	return parseSessionArchive(r, MaxArchiveBytes, a, func(hash string, data []byte) error {
		a.Blobs[hash] = data
		return nil
	})
}

// StreamSessionArchive is ParseSessionArchive for a document of at most
// maxBytes (MaxImportBytes when 0) that it does not hold: each blob is
// checked and handed to sink as soon as its line is read, and only its size
// is kept (Blobs stays empty), so memory is bounded by one blob line and
// the event lines (at most MaxArchiveBytes of them). sink runs only for
// blobs that are well formed, match their hash and size and are referred to
// by an event; a document refused later has had some blobs handed on, which
// the caller undoes. An error from sink ends the parse with that error.
func StreamSessionArchive(r io.Reader, maxBytes int64, sink func(hash string, data []byte) error) (*SessionArchive, error) {
	if maxBytes <= 0 {
		maxBytes = MaxImportBytes
	}
	return parseSessionArchive(r, maxBytes, &SessionArchive{}, sink)
}

func parseSessionArchive(r io.Reader, maxBytes int64, a *SessionArchive, sink func(hash string, data []byte) error) (*SessionArchive, error) {
	a.BlobSizes = map[string]int64{}
	lr := &io.LimitedReader{R: r, N: maxBytes + 1}
	br := bufio.NewReaderSize(lr, 64<<10)
	p := archiveParser{a: a, sink: sink, attachments: map[string]core.Attachment{}, attLine: map[string]int{}, attHashes: map[string]bool{}, fileHashes: map[string]bool{}}
	n := 0
	for {
		raw, err := readArchiveLine(br, MaxArchiveBlobLine)
		if lr.N <= 0 {
			return nil, core.Errorf(core.CodeBadInput, "the document is larger than %d MiB, the import limit", maxBytes>>20)
		}
		if errors.Is(err, errLineTooLong) {
			return nil, ArchiveError(n+1, "longer than %d bytes, the limit for a line", MaxArchiveBlobLine)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read the document: %w", err)
		}
		if len(raw) > 0 || !errors.Is(err, io.EOF) {
			n++
			if perr := p.line(n, raw); perr != nil {
				return nil, perr
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	return a, p.finish(n)
}

var errLineTooLong = errors.New("line too long")

// readArchiveLine returns the next line without its newline (and a CR
// before it), at most max bytes.
func readArchiveLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max+2 {
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, err
	}
}

// Attachments returns the distinct attachments the archive's messages refer
// to, in order of first mention.
func (a *SessionArchive) Attachments() []core.Attachment {
	seen := map[string]bool{}
	var out []core.Attachment
	for _, ev := range a.Events {
		if ev.Type != core.EventMessageEnd && ev.Type != core.EventMessageImported {
			continue
		}
		var p core.MessagePayload
		if json.Unmarshal(ev.Payload, &p) != nil {
			continue
		}
		for _, at := range p.Message.Attachments {
			if !seen[at.ID] {
				seen[at.ID] = true
				out = append(out, at)
			}
		}
	}
	return out
}

func clipError(err error) string { return core.Clip(err.Error(), 200) }
