package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
	"github.com/foya-dev/foya/core/session"
)

// Archiver exports sessions as foya.session documents and imports them
// (docs/export.md). It reads and writes through the session service and the
// artifact store only; it never touches a running turn.
type Archiver struct {
	svc *session.Service
	cfg *Config
	log *slog.Logger
}

// exportPage is how many events an export reads from the store at a time.
const exportPage = 1000

// Export writes the session as a foya.session document (docs/export.md)
// of at most maxBytes: every persisted event in seq order, then the stored
// bytes its messages refer to (attachments, and file contents that rewind
// restores, when they are still stored and at most MaxAttachmentBytes).
// Provider-native state is left out. It reads what is persisted, so it
// works while a turn runs.
func (ar *Archiver) Export(ctx context.Context, sessionID string, maxBytes int64) ([]byte, error) {
	if _, err := ar.svc.Store().Session(ctx, sessionID); err != nil {
		return nil, err
	}
	events, size, err := ar.readEvents(ctx, sessionID, maxBytes)
	if err != nil {
		return nil, err
	}
	if len(events) > archive.MaxArchiveEvents {
		return nil, core.Errorf(core.CodeBadInput, "session %s has %d events; a foya.session document holds at most %d", sessionID, len(events), archive.MaxArchiveEvents)
	}
	blobs := map[string][]byte{}
	var order []string
	addBlob := func(hash string, required bool, what string) error {
		if _, ok := blobs[hash]; ok || hash == "" {
			return nil
		}
		if ar.cfg.Blobs == nil {
			if required {
				return core.Errorf(core.CodeUnavailable, "this kernel has no artifact store: cannot export %s", what)
			}
			return nil
		}
		data, err := ar.cfg.Blobs.Read(hash)
		if err != nil || len(data) > core.MaxAttachmentBytes {
			if required {
				return fmt.Errorf("export session %s: read the bytes of %s: %w", sessionID, what, err)
			}
			return nil // a file change whose bytes are gone: rewind could not restore it here either
		}
		size += int64(len(data))*4/3 + 200
		if size > maxBytes {
			return exportTooLarge(sessionID, maxBytes)
		}
		blobs[hash] = data
		order = append(order, hash)
		return nil
	}
	for i := range events {
		if err := messageBlobs(&events[i], addBlob); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	h := archive.ArchiveHeader{SessionID: sessionID, ExportedAt: time.Now().UTC()}
	if err := archive.WriteSessionArchive(&buf, h, events, order, blobs); err != nil {
		return nil, fmt.Errorf("export session %s: %w", sessionID, err)
	}
	if int64(buf.Len()) > maxBytes {
		return nil, exportTooLarge(sessionID, maxBytes)
	}
	return buf.Bytes(), nil
}

// readEvents reads every persisted event of the session, refusing a log
// whose payloads pass maxBytes; size is the document size they take.
func (ar *Archiver) readEvents(ctx context.Context, sessionID string, maxBytes int64) ([]core.Event, int64, error) {
	var events []core.Event
	var size int64
	for after := int64(0); ; {
		page, err := ar.svc.Store().Events(ctx, sessionID, after, exportPage)
		if err != nil {
			return nil, 0, fmt.Errorf("export session %s: %w", sessionID, err)
		}
		if len(page) == 0 {
			break
		}
		for _, ev := range page {
			size += int64(len(ev.Payload)) + 100
		}
		if size > maxBytes {
			return nil, 0, exportTooLarge(sessionID, maxBytes)
		}
		events = append(events, page...)
		after = page[len(page)-1].Seq
	}
	return events, size, nil
}

// messageBlobs calls add for every blob the message of ev refers to (when
// ev records a message): its attachments (required) and the bytes of its
// file changes (not required: rewind can do without them).
func messageBlobs(ev *core.Event, add func(hash string, required bool, what string) error) error {
	if ev.Type != core.EventMessageEnd && ev.Type != core.EventMessageImported {
		return nil
	}
	var p core.MessagePayload
	if err := ev.Decode(&p); err != nil {
		return err
	}
	for _, a := range p.Message.Attachments {
		if err := add(a.SHA256, true, "attachment "+a.ID); err != nil {
			return err
		}
	}
	for _, fc := range p.Message.FileChanges {
		for _, h := range []string{fc.BeforeHash, fc.AfterHash} {
			if err := add(h, false, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

func exportTooLarge(sessionID string, maxBytes int64) error {
	return core.Errorf(core.CodeBadInput, "the export of session %s is larger than %d MiB, the limit of one export", sessionID, maxBytes>>20)
}

// Import creates a new top-level session from a foya.session
// document read from r (untrusted: see ParseSessionArchive). The events keep
// their seqs and content; the session and its attachments get new ids; the
// session is bound to projectID (empty: none) and to the document's
// connection and model when this kernel has them, else left unbound; its
// source is import:<the document's session id>. A document exported while
// the session was busy gets the closing events a kernel restart writes
// (turn_finished cancelled, phase_changed idle); one that ends in approval
// mode BYPASS is set to ASK (a document cannot grant permissions). Nothing
// is written unless everything is: the events, projections and attachment
// records go in one transaction, and blobs stored for it are removed again
// if it fails.
func (ar *Archiver) Import(ctx context.Context, r io.Reader, projectID string) (core.Session, error) {
	imp, ok := ar.svc.Store().(core.SessionImporter)
	if !ok {
		return core.Session{}, core.Errorf(core.CodeUnavailable, "this kernel's store cannot import sessions")
	}
	importDir := ""
	if projectID != "" {
		prj, err := ar.svc.Store().Project(ctx, projectID)
		if err != nil {
			return core.Session{}, err
		}
		importDir = prj.Path
	}
	// The blobs go to the artifact store as they are read (only one is in
	// memory at a time); every failure from here on removes those this
	// import stored (created), so a refused import leaves nothing.
	var created []string
	done := false
	defer func() {
		if !done {
			deleteBlobs(ar.cfg.Blobs, ar.log, created)
		}
	}()
	a, err := archive.StreamSessionArchive(r, archive.MaxImportBytes, func(hash string, data []byte) error {
		stored, err := ar.storeImportBlob(ctx, hash, data)
		if stored {
			created = append(created, hash)
		}
		return err
	})
	if err != nil {
		return core.Session{}, err
	}
	// The write tool's rules hold for file changes a rewind could write:
	// the parser refused absolute, escaping and .git paths; here paths in
	// the data directory or a secret path of this kernel, or through a
	// symlink out of the project, are refused (a rewind checks again when
	// it writes).
	if err := ar.checkImportFileChanges(importDir, a); err != nil {
		return core.Session{}, err
	}
	newID := core.NewID("ses")
	events, atts, err := rewriteImport(a, newID, projectID, ar.importBinding(ctx))
	if err != nil {
		return core.Session{}, err
	}

	if err := ar.svc.ClaimNew(ctx, newID); err != nil {
		return core.Session{}, err
	}
	unlock := ar.svc.Lock(newID)
	_, err = imp.ImportSession(ctx, newID, events, atts)
	unlock()
	if err != nil {
		return core.Session{}, fmt.Errorf("import session %s: %w", a.Header.SessionID, err)
	}
	done = true
	ar.svc.Broker().PublishKernel(core.KernelEvent{Type: core.KernelSessionCreated, SessionID: newID, At: time.Now().UTC()})
	ar.log.Info("session imported", "session_id", newID, "source", a.Header.SessionID, "events", len(events), "blobs", len(a.BlobOrder), "blobs_stored", len(created))
	return ar.svc.Store().Session(ctx, newID)
}

// importRewrite maps the events of a parsed archive onto a new session.
type importRewrite struct {
	newID, projectID string
	source           string // import:<the document's session id>
	// hadProject says the document's session had a project: projectID
	// takes its place wherever it has one; a session that never had one is
	// bound from its creation.
	hadProject bool
	attIDs     map[string]string // old attachment id → new id
	binding    func(connID, model string) (string, string)
}

// rewriteImport returns the events and attachment records of the imported
// session newID: new session and attachment ids, projectID, the binding of
// connection and model, the closing events of a session exported while
// busy, and approval mode BYPASS turned into ASK (a document cannot grant
// permissions: one session_updated more; set BYPASS again explicitly if
// wanted).
func rewriteImport(a *archive.SessionArchive, newID, projectID string, binding func(connID, model string) (string, string)) ([]core.Event, []core.Attachment, error) {
	w := importRewrite{newID: newID, projectID: projectID, source: "import:" + a.Header.SessionID, attIDs: map[string]string{}, binding: binding}
	var atts []core.Attachment
	for _, at := range a.Attachments() {
		old := at.ID
		at.ID = core.NewID("att")
		w.attIDs[old] = at.ID
		atts = append(atts, at)
	}
	w.hadProject = hadProject(a.Events)
	events := make([]core.Event, 0, len(a.Events)+3)
	var last *core.SessionMeta // the session's metadata after the last session event
	for _, ev := range a.Events {
		ev, meta, err := w.event(ev)
		if err != nil {
			return nil, nil, err
		}
		if meta != nil {
			last = meta
		}
		events = append(events, ev)
	}
	closing, err := closingEvents(newID, events)
	if err != nil {
		return nil, nil, err
	}
	events = append(events, closing...)
	if last != nil && last.ApprovalMode == core.ApprovalBypass {
		meta := *last
		meta.ApprovalMode = core.ApprovalAsk
		ev, err := core.NewEvent(newID, core.EventSessionUpdated, core.SessionPayload{Session: meta, Changed: []string{"approvalMode"}})
		if err != nil {
			return nil, nil, err
		}
		events = append(events, ev)
	}
	return events, atts, nil
}

// hadProject reports whether any session event of the document names a
// project.
func hadProject(events []core.Event) bool {
	for _, ev := range events {
		if ev.Type == core.EventSessionCreated || ev.Type == core.EventSessionUpdated {
			var p core.SessionPayload
			if ev.Decode(&p) == nil && p.Session.ProjectID != "" {
				return true
			}
		}
	}
	return false
}

// event rewrites one event for the new session; meta is the session's
// metadata when ev is a session event.
func (w *importRewrite) event(ev core.Event) (_ core.Event, meta *core.SessionMeta, err error) {
	ev.SessionID = w.newID
	switch ev.Type {
	case core.EventSessionCreated, core.EventSessionUpdated:
		var p core.SessionPayload
		if err := ev.Decode(&p); err != nil {
			return ev, nil, err
		}
		m := &p.Session
		m.ID, m.ParentID = w.newID, ""
		if m.ProjectID != "" || !w.hadProject {
			m.ProjectID = w.projectID
		}
		m.Source = w.source
		m.Worktree = nil // the worktree stays with the exported session: the import works in its project's directory
		m.ConnectionID, m.Model = w.binding(m.ConnectionID, m.Model)
		if ev.Payload, err = json.Marshal(p); err != nil {
			return ev, nil, fmt.Errorf("encode imported %s: %w", ev.Type, err)
		}
		return ev, &p.Session, nil
	case core.EventMessageEnd, core.EventMessageImported:
		var p core.MessagePayload
		if err := ev.Decode(&p); err != nil {
			return ev, nil, err
		}
		if len(p.Message.Attachments) > 0 {
			for i := range p.Message.Attachments {
				p.Message.Attachments[i].ID = w.attIDs[p.Message.Attachments[i].ID]
			}
			if ev.Payload, err = json.Marshal(p); err != nil {
				return ev, nil, fmt.Errorf("encode imported message: %w", err)
			}
		}
	}
	return ev, nil, nil
}

// importBinding returns how an imported session's connection and model map
// onto this kernel's catalog: kept when the connection exists and accepts
// the model, else unbound (cached per pair).
func (ar *Archiver) importBinding(ctx context.Context) func(connID, model string) (string, string) {
	type ref struct{ conn, model string }
	seen := map[ref]ref{}
	return func(connID, model string) (string, string) {
		if connID == "" || model == "" {
			return "", ""
		}
		k := ref{connID, model}
		if v, ok := seen[k]; ok {
			return v.conn, v.model
		}
		var out ref
		if got, err := ar.cfg.Catalog.ResolveSessionModel(ctx, connID, model); err == nil && got.ConnectionID == connID && got.Model == model {
			out = k
		}
		seen[k] = out
		return out.conn, out.model
	}
}

// closingEvents ends what a document exported mid-turn leaves open, as a
// kernel restart does: the open turn's turn_finished (cancelled) and
// phase_changed idle.
func closingEvents(sessionID string, events []core.Event) ([]core.Event, error) {
	phase, openTurn := core.PhaseIdle, ""
	for _, ev := range events {
		switch ev.Type {
		case core.EventPhaseChanged:
			var p core.PhasePayload
			if err := ev.Decode(&p); err != nil {
				return nil, err
			}
			phase = p.Phase
		case core.EventTurnStarted, core.EventTurnFinished:
			var p core.TurnPayload
			if err := ev.Decode(&p); err != nil {
				return nil, err
			}
			openTurn = ""
			if ev.Type == core.EventTurnStarted {
				openTurn = p.TurnID
			}
		}
	}
	if phase == core.PhaseIdle {
		return nil, nil
	}
	var out []core.Event
	if openTurn != "" {
		ev, err := core.NewEvent(sessionID, core.EventTurnFinished, core.TurnPayload{TurnID: openTurn, Status: core.TurnCancelled,
			Reason: "the session was exported during the turn; completed messages are kept"})
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	ev, err := core.NewEvent(sessionID, core.EventPhaseChanged, core.PhasePayload{Phase: core.PhaseIdle, Reason: "imported"})
	if err != nil {
		return nil, err
	}
	return append(out, ev), nil
}

// storeImportBlob puts one blob of a document in the artifact store unless
// it is there already; stored says whether this call stored it (to remove
// if the import fails).
func (ar *Archiver) storeImportBlob(ctx context.Context, hash string, data []byte) (stored bool, err error) {
	if ar.cfg.Blobs == nil {
		return false, core.Errorf(core.CodeUnavailable, "this kernel has no artifact store for the document's blobs")
	}
	if _, err := ar.cfg.Blobs.Read(hash); err == nil {
		return false, nil
	} else if !errors.Is(err, core.ErrNotFound) {
		return false, fmt.Errorf("import: look up blob %s: %w", hash, err)
	}
	got, _, err := ar.cfg.Blobs.Put(ctx, bytes.NewReader(data), core.MaxAttachmentBytes)
	if err == nil && got != hash {
		deleteBlobs(ar.cfg.Blobs, ar.log, []string{got})
		err = fmt.Errorf("stored as %s", got)
	}
	if err != nil {
		return false, fmt.Errorf("import: store blob %s: %w", hash, err)
	}
	return true, nil
}
