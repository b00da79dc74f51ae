package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/foya-dev/foya/core"
)

type archiveParser struct {
	a *SessionArchive
	// attachments are those the messages refer to, by id, and where first seen.
	attachments map[string]core.Attachment
	attLine     map[string]int
	attOrder    []string
	// attHashes and fileHashes are the hashes attachments and file changes refer to.
	attHashes  map[string]bool
	fileHashes map[string]bool
	// termHashes are the outputSha256 of terminal_exited events.
	termHashes map[string]bool
	blobLines  bool
	// sink receives each checked blob; eventBytes counts the event lines.
	sink       func(hash string, data []byte) error
	eventBytes int64
}

func (p *archiveParser) line(n int, raw []byte) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ArchiveError(n, "empty line (a foya.session document has one JSON value per line)")
	}
	if !utf8.Valid(raw) {
		return ArchiveError(n, "not valid UTF-8")
	}
	if n == 1 {
		return p.header(raw)
	}
	if hash, size, data, ok := exportedBlobLine(raw); ok && !slowBlobLines {
		p.blobLines = true
		var notBase64 base64Error
		if err := p.blob(n, ArchiveLine{Kind: "blob", SHA256: hash, Size: &size}, data); !errors.As(err, &notBase64) {
			return err
		}
		// Not base64: encoding/json reports what is wrong with the line.
	}
	var l ArchiveLine
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return ArchiveError(n, "not a foya.session line: %s", clipError(err))
	}
	if dec.More() {
		return ArchiveError(n, "more than one JSON value")
	}
	switch l.Kind {
	case "event":
		if len(raw) > MaxArchiveEventLine {
			return ArchiveError(n, "longer than %d bytes, the limit for an event line", MaxArchiveEventLine)
		}
		if p.blobLines {
			return ArchiveError(n, "an event after the blobs: events come first, in seq order")
		}
		if p.eventBytes += int64(len(raw)) + 1; p.eventBytes > MaxArchiveBytes {
			return ArchiveError(n, "the event lines are larger than %d MiB, the limit of a document's events (its blobs are not counted)", MaxArchiveBytes>>20)
		}
		return p.event(n, l)
	case "blob":
		p.blobLines = true
		data := []byte(l.Data)
		l.Data = ""
		return p.blob(n, l, data)
	}
	return ArchiveError(n, "kind %q: expected event or blob", core.Clip(l.Kind, 32))
}

func (p *archiveParser) header(raw []byte) error {
	if len(raw) > 64<<10 {
		return ArchiveError(1, "the header is longer than 64 KiB")
	}
	var h ArchiveHeader
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || dec.More() {
		if err == nil {
			err = errors.New("more than one JSON value")
		}
		return ArchiveError(1, "not a foya.session header (is this an exportSession document?): %s", clipError(err))
	}
	switch {
	case h.Format != ArchiveFormat:
		return ArchiveError(1, "format %q: expected %q", core.Clip(h.Format, 40), ArchiveFormat)
	case h.Version != ArchiveVersion:
		return ArchiveError(1, "version %d: this kernel reads version %d", h.Version, ArchiveVersion)
	case !validArchiveID(h.SessionID):
		return ArchiveError(1, "sessionId %q: expected an id such as ses_0123abcd (letters, digits, _ and -, at most 64)", core.Clip(h.SessionID, 40))
	case h.Events < 1 || h.Events > MaxArchiveEvents:
		return ArchiveError(1, "events %d: expected 1 to %d", h.Events, MaxArchiveEvents)
	case h.Blobs < 0 || h.Blobs > MaxArchiveBlobs:
		return ArchiveError(1, "blobs %d: expected 0 to %d", h.Blobs, MaxArchiveBlobs)
	}
	p.a.Header = h
	return nil
}

func validArchiveID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func (p *archiveParser) event(n int, l ArchiveLine) error {
	want := int64(len(p.a.Events)) + 1
	switch {
	case len(p.a.Events) >= p.a.Header.Events:
		return ArchiveError(n, "more events than the %d the header announces", p.a.Header.Events)
	case l.Seq != want:
		return ArchiveError(n, "seq %d: expected %d (events come in seq order from 1, without gaps)", l.Seq, want)
	case !archiveEventTypes[l.Type]:
		if l.Type.LiveOnly() {
			return ArchiveError(n, "type %q is live-only and never stored", l.Type)
		}
		return ArchiveError(n, "unknown event type %q (this kernel reads foya.session version %d)", core.Clip(string(l.Type), 40), ArchiveVersion)
	case (l.Seq == 1) != (l.Type == core.EventSessionCreated):
		return ArchiveError(n, "session_created must be the first event, and only the first")
	case l.At == nil || l.At.IsZero() || l.At.Year() < 2000 || l.At.Year() > 9999:
		return ArchiveError(n, "at: expected the event's RFC 3339 time")
	case len(l.Payload) == 0 || l.Payload[0] != '{':
		return ArchiveError(n, "payload: expected a JSON object")
	case l.Size != nil || l.SHA256 != "" || l.Data != "":
		return ArchiveError(n, "an event line has no sha256, size or data")
	}
	payload, err := p.payload(n, l)
	if err != nil {
		return err
	}
	if l.Type == core.EventTerminalExited {
		if err := p.terminalOutput(n, payload); err != nil {
			return err
		}
	}
	p.a.Events = append(p.a.Events, core.Event{Seq: l.Seq, Type: l.Type, At: l.At.UTC(), Payload: payload})
	return nil
}

// payload validates an event payload and re-encodes it from its typed form
// when the kernel has one (provider-native state is dropped: it is never
// exported, and imported state would be sent to a provider).
func (p *archiveParser) payload(n int, l ArchiveLine) (json.RawMessage, error) {
	var typed any
	var err error
	switch l.Type {
	case core.EventSessionCreated, core.EventSessionUpdated:
		typed, err = decodeAs(n, l, func(sp *core.SessionPayload) error {
			if err := validArchiveMeta(sp.Session); err != nil {
				return ArchiveError(n, "%s payload: %s", l.Type, err)
			}
			return nil
		})
	case core.EventPhaseChanged:
		typed, err = decodeAs(n, l, func(pp *core.PhasePayload) error {
			if pp.Phase != core.PhaseIdle && pp.Phase != core.PhaseTurn && pp.Phase != core.PhaseCompaction {
				return ArchiveError(n, "phase %q: expected idle, turn or compaction", core.Clip(string(pp.Phase), 32))
			}
			return nil
		})
	case core.EventMessageEnd, core.EventMessageImported:
		typed, err = decodeAs(n, l, func(mp *core.MessagePayload) error { return p.message(n, &mp.Message) })
	case core.EventHistoryRewound:
		typed, err = decodeAs(n, l, func(rp *core.RewindPayload) error {
			if rp.FromSeq < 1 || rp.FromSeq >= l.Seq {
				return ArchiveError(n, "history_rewound fromSeq %d: expected an earlier seq", rp.FromSeq)
			}
			return nil
		})
	case core.EventCompactionCheckpoint:
		typed, err = decodeAs(n, l, func(cp *core.CheckpointPayload) error {
			if cp.ThroughSeq < 0 || cp.ThroughSeq >= l.Seq {
				return ArchiveError(n, "compaction_checkpoint throughSeq %d: expected an earlier seq", cp.ThroughSeq)
			}
			cp.ProviderState = nil
			return nil
		})
	case core.EventUsage:
		typed, err = decodeAs(n, l, func(up *core.UsagePayload) error { return validArchiveUsage(n, up.Usage) })
	case core.EventTurnStarted, core.EventTurnFinished:
		typed, err = decodeAs[core.TurnPayload](n, l, nil)
	default:
		if _, err := decodeAs[map[string]json.RawMessage](n, l, nil); err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, l.Payload); err != nil {
			return nil, ArchiveError(n, "%s payload: %s", l.Type, clipError(err))
		}
		return buf.Bytes(), nil
	}
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(typed)
	if err != nil {
		return nil, ArchiveError(n, "%s payload: %s", l.Type, clipError(err))
	}
	return out, nil
}

// decodeAs decodes line n's payload as a T and checks it with check (nil:
// no check).
func decodeAs[T any](n int, l ArchiveLine, check func(*T) error) (any, error) {
	var v T
	if err := json.Unmarshal(l.Payload, &v); err != nil {
		return nil, ArchiveError(n, "%s payload: %s", l.Type, clipError(err))
	}
	if check != nil {
		if err := check(&v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// validArchiveUsage refuses negative token counts and a cost that is not a
// non-negative number.
func validArchiveUsage(n int, u core.Usage) error {
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.TotalTokens < 0 || u.CachedTokens < 0 || u.CacheWriteTokens < 0 {
		return ArchiveError(n, "usage: token counts must not be negative")
	}
	if u.Cost != nil && (math.IsNaN(*u.Cost) || math.IsInf(*u.Cost, 0) || *u.Cost < 0) {
		return ArchiveError(n, "usage: cost must be a non-negative number")
	}
	return nil
}

func validArchiveMeta(m core.SessionMeta) error {
	switch {
	case !m.ApprovalMode.Valid():
		return fmt.Errorf("approvalMode %q: expected explore, ask, guarded or bypass", core.Clip(string(m.ApprovalMode), 32))
	case !m.AgentMode.Valid():
		return fmt.Errorf("agentMode %q: expected execute, plan or awaiting_confirmation", core.Clip(string(m.AgentMode), 32))
	case m.CreatedAt.IsZero():
		return errors.New("createdAt: missing")
	}
	if err := core.ValidTitle(m.Title); err != nil {
		return err
	}
	if m.ReasoningEffort != "" {
		if err := core.ValidReasoningEffort(m.ReasoningEffort); err != nil {
			return err
		}
	}
	return nil
}

func (p *archiveParser) message(n int, m *core.Message) error {
	if !m.Role.Valid() {
		return ArchiveError(n, "message role %q: expected user, assistant, tool or system", core.Clip(string(m.Role), 32))
	}
	m.ProviderState = nil
	for i, a := range m.Attachments {
		switch {
		case !validArchiveID(a.ID):
			return ArchiveError(n, "attachments[%d].id %q: expected an id such as att_0123abcd", i, core.Clip(a.ID, 40))
		case !validSHA256(a.SHA256):
			return ArchiveError(n, "attachments[%d].sha256: expected 64 lowercase hex digits", i)
		case a.Kind != "image" && a.Kind != "file":
			return ArchiveError(n, "attachments[%d].kind %q: expected image or file", i, core.Clip(a.Kind, 32))
		case a.Size < 0 || a.Size > core.MaxAttachmentBytes:
			return ArchiveError(n, "attachments[%d].size %d: expected 0 to %d", i, a.Size, core.MaxAttachmentBytes)
		case a.Name == "" || len(a.Name) > 255 || strings.ContainsAny(a.Name, "/\\\x00"):
			return ArchiveError(n, "attachments[%d].name: expected a file name of 1 to 255 bytes without / or \\", i)
		case a.MediaType == "" || len(a.MediaType) > 255:
			return ArchiveError(n, "attachments[%d].mediaType: expected a media type such as image/png", i)
		case a.Width < 0 || a.Height < 0:
			return ArchiveError(n, "attachments[%d]: width and height must not be negative", i)
		}
		if prev, ok := p.attachments[a.ID]; ok && prev != a {
			return ArchiveError(n, "attachments[%d]: attachment %s differs from its earlier mention on line %d", i, a.ID, p.attLine[a.ID])
		} else if !ok {
			p.attachments[a.ID], p.attLine[a.ID] = a, n
			p.attOrder = append(p.attOrder, a.ID)
			p.attHashes[a.SHA256] = true
		}
	}
	for i, fc := range m.FileChanges {
		if err := ValidFileChangePath(fc.Path); err != nil {
			return ArchiveError(n, "fileChanges[%d].path %q: %s", i, core.Clip(fc.Path, 80), err)
		}
		switch fc.Action {
		case core.FileCreate, core.FileModify, core.FileDelete:
		default:
			return ArchiveError(n, "fileChanges[%d].action %q: expected create, modify or delete", i, core.Clip(string(fc.Action), 32))
		}
		if fc.BeforeMode&^0o777 != 0 {
			return ArchiveError(n, "fileChanges[%d].beforeMode %o: expected permission bits only (0 to 0777)", i, fc.BeforeMode)
		}
		p.a.FileChanges = append(p.a.FileChanges, ArchiveFileChange{Line: n, Index: i, Path: fc.Path})
		for _, h := range []string{fc.BeforeHash, fc.AfterHash} {
			if h == "" {
				continue
			}
			if !validSHA256(h) {
				return ArchiveError(n, "fileChanges[%d]: hashes are 64 lowercase hex digits", i)
			}
			p.fileHashes[h] = true
		}
	}
	return nil
}

func validSHA256(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, r := range h {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// exportedBlobLine reads a blob line spelled as the kernel's export writes
// it, {"kind":"blob","sha256":"<64 hex digits>","size":<digits>,"data":"<base64>"},
// without encoding/json, whose scanner steps through a blob's megabytes one
// byte (and one call) at a time. data is part of raw. Any other spelling
// (spaces, another order of keys, escapes, a raw CR, which the base64
// decoder would skip) is not ok and goes through encoding/json, as does a
// line whose data turns out not to be base64 (base64Error), so that both
// ways accept the same lines and give the same errors.
func exportedBlobLine(raw []byte) (hash string, size int64, data []byte, ok bool) {
	const head, mid, tail = `{"kind":"blob","sha256":"`, `","size":`, `,"data":"`
	rest, ok := bytes.CutPrefix(raw, []byte(head))
	if !ok || len(rest) < 64 {
		return "", 0, nil, false
	}
	if hash = string(rest[:64]); !validSHA256(hash) {
		return "", 0, nil, false
	}
	if rest, ok = bytes.CutPrefix(rest[64:], []byte(mid)); !ok {
		return "", 0, nil, false
	}
	digits := 0
	for digits < len(rest) && digits < 19 && rest[digits] >= '0' && rest[digits] <= '9' {
		size = size*10 + int64(rest[digits]-'0')
		digits++
	}
	if digits == 0 || digits > 18 || (digits > 1 && rest[0] == '0') {
		return "", 0, nil, false
	}
	if rest, ok = bytes.CutPrefix(rest[digits:], []byte(tail)); !ok {
		return "", 0, nil, false
	}
	if data, ok = bytes.CutSuffix(rest, []byte(`"}`)); !ok || bytes.IndexByte(data, '"') >= 0 || bytes.IndexByte(data, '\\') >= 0 || bytes.IndexByte(data, '\r') >= 0 {
		return "", 0, nil, false
	}
	return hash, size, data, true
}

// slowBlobLines turns exportedBlobLine off (tests compare both ways).
var slowBlobLines = false

// base64Error is blob's refusal of data that is not base64.
type base64Error struct{ error }

func (e base64Error) Unwrap() error { return e.error }

// blob checks one blob line, whose base64 data is data (l.Data is unused),
// and hands the decoded bytes to the sink.
func (p *archiveParser) blob(n int, l ArchiveLine, data []byte) error {
	switch {
	case len(p.a.Events) < p.a.Header.Events:
		return ArchiveError(n, "a blob after %d events: the header announces %d events, which come first", len(p.a.Events), p.a.Header.Events)
	case len(p.a.BlobOrder) >= p.a.Header.Blobs:
		return ArchiveError(n, "more blobs than the %d the header announces", p.a.Header.Blobs)
	case l.Seq != 0 || l.Type != "" || l.At != nil || len(l.Payload) > 0:
		return ArchiveError(n, "a blob line has no seq, type, at or payload")
	case !validSHA256(l.SHA256):
		return ArchiveError(n, "sha256: expected 64 lowercase hex digits")
	case l.Size == nil || *l.Size < 0 || *l.Size > core.MaxAttachmentBytes:
		return ArchiveError(n, "size: expected 0 to %d", core.MaxAttachmentBytes)
	case base64.StdEncoding.DecodedLen(len(data)) > core.MaxAttachmentBytes+3:
		return ArchiveError(n, "data: more than %d bytes", core.MaxAttachmentBytes)
	}
	if _, dup := p.a.BlobSizes[l.SHA256]; dup {
		return ArchiveError(n, "blob %s appears twice", l.SHA256)
	}
	decoded := make([]byte, base64.StdEncoding.DecodedLen(len(data)))
	m, err := base64.StdEncoding.Decode(decoded, data)
	if err != nil {
		return base64Error{ArchiveError(n, "data: not standard base64: %s", clipError(err))}
	}
	data = decoded[:m]
	if int64(len(data)) != *l.Size {
		return ArchiveError(n, "data is %d bytes, size says %d", len(data), *l.Size)
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != l.SHA256 {
		return ArchiveError(n, "data does not match its sha256")
	}
	if !p.attHashes[l.SHA256] && !p.fileHashes[l.SHA256] && !p.termHashes[l.SHA256] {
		return ArchiveError(n, "blob %s is not referred to by any event", l.SHA256)
	}
	p.a.BlobSizes[l.SHA256] = int64(len(data))
	p.a.BlobOrder = append(p.a.BlobOrder, l.SHA256)
	if p.sink != nil {
		return p.sink(l.SHA256, data)
	}
	return nil
}

// finish checks what only the whole document shows.
func (p *archiveParser) finish(lines int) error {
	if lines == 0 {
		return ArchiveError(1, "the document is empty")
	}
	if len(p.a.Events) < p.a.Header.Events {
		return ArchiveError(lines, "the document ends after %d of the %d events the header announces (truncated?)", len(p.a.Events), p.a.Header.Events)
	}
	if len(p.a.BlobOrder) < p.a.Header.Blobs {
		return ArchiveError(lines, "the document ends after %d of the %d blobs the header announces (truncated?)", len(p.a.BlobOrder), p.a.Header.Blobs)
	}
	for _, id := range p.attOrder {
		a := p.attachments[id]
		size, ok := p.a.BlobSizes[a.SHA256]
		if !ok {
			return ArchiveError(p.attLine[id], "attachment %s: its bytes (blob %s) are not in the document", id, a.SHA256)
		}
		if size != a.Size {
			return ArchiveError(p.attLine[id], "attachment %s: size %d, but its blob has %d bytes", id, a.Size, size)
		}
	}
	return nil
}
