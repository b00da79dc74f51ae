package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
)

// Rewinder rewinds a session to one of its user messages (SES-11): the
// history after it leaves the active context and the files the session and
// its sub-agents changed since are restored. It refuses while a turn runs.
type Rewinder struct {
	svc      *session.Service
	cfg      *Config
	log      *slog.Logger
	runtimes *runtimes
	dirs     workDirs
}

// Rewind actions on a file.
const (
	RewindRestore = "restore" // write the content from before the rewound part
	RewindDelete  = "delete"  // the rewound part created the file
	RewindNone    = "none"    // already as it was
)

// RewindPreview is the first phase of a rewind (SES-11).
type RewindPreview struct {
	HeadSeq        int64
	FileStateToken string
	Text           string
	// Command, Attachments and BrowserElements are the rest of the rewound
	// user message, for the input box (the attachments stay stored, so
	// sending them again needs no new upload).
	Command         string
	Attachments     []core.Attachment
	BrowserElements []core.BrowserElement
	Files           []core.RewindFile
}

// Preview checks that messageSeq is an active user message and
// reports what a rewind to it would restore: the files changed afterwards by
// the session's tools and by the sub-agents its task calls started.
func (rw *Rewinder) Preview(ctx context.Context, sessionID string, messageSeq int64) (RewindPreview, error) {
	s, err := rw.svc.Session(ctx, sessionID)
	if err != nil {
		return RewindPreview{}, err
	}
	msgs, err := rw.svc.Messages(ctx, sessionID, false)
	if err != nil {
		return RewindPreview{}, err
	}
	i := slices.IndexFunc(msgs, func(m core.Message) bool { return m.Seq == messageSeq })
	if i < 0 {
		return RewindPreview{}, core.Errorf(core.CodeBadInput, "messageSeq %d is not an active message of session %s", messageSeq, sessionID)
	}
	target := msgs[i]
	if target.Role != core.RoleUser {
		return RewindPreview{}, core.Errorf(core.CodeBadInput, "messageSeq %d is a %s message; rewind to a user message", messageSeq, target.Role)
	}
	dir, err := rw.dirs.workDir(ctx, s)
	if err != nil {
		return RewindPreview{}, err
	}
	after, err := rw.withChildChanges(ctx, s, msgs[i+1:])
	if err != nil {
		return RewindPreview{}, err
	}
	rr := rw.cfg.openRestoreRoot(dir)
	defer rr.Close()
	files := rw.rewindFiles(rr, after)
	return RewindPreview{
		HeadSeq: s.HeadSeq, FileStateToken: fileStateToken(rr, files), Text: target.Text,
		Command: target.Command, Attachments: target.Attachments, BrowserElements: target.BrowserElements, Files: files,
	}, nil
}

// withChildChanges inserts, before each task tool result in after, the
// messages of the child session that task call started, so that the files a
// sub-agent changed are rewound with its parent's turn, in the order they
// changed. A child works in its parent's directory (the project, the
// worktree or the scratch directory); one bound elsewhere is left out.
func (rw *Rewinder) withChildChanges(ctx context.Context, s core.Session, after []core.Message) ([]core.Message, error) {
	if !slices.ContainsFunc(after, func(m core.Message) bool { return m.Role == core.RoleTool && m.ToolName == ToolTask }) {
		return after, nil
	}
	kids, err := rw.svc.Sessions(ctx, core.SessionFilter{ParentID: s.ID, IncludeChildren: true})
	if err != nil {
		return nil, err
	}
	bySource := map[string]core.Session{}
	for _, k := range kids {
		bySource[k.Source] = k
	}
	out := make([]core.Message, 0, len(after))
	for _, m := range after {
		if m.Role == core.RoleTool && m.ToolName == ToolTask {
			if kid, ok := bySource["task:"+m.ToolCallID]; ok {
				if kid.ProjectID == s.ProjectID {
					kmsgs, err := rw.svc.Messages(ctx, kid.ID, false)
					if err != nil {
						return nil, err
					}
					out = append(out, kmsgs...)
				}
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// rewindFiles folds the file changes after the target into one action per
// path, in order of first change.
func (rw *Rewinder) rewindFiles(rr *restoreRoot, after []core.Message) []core.RewindFile {
	byPath := map[string]*core.RewindFile{}
	var order []string
	missing := map[string]bool{}
	for _, m := range after {
		for _, fc := range m.FileChanges {
			f := byPath[fc.Path]
			if f == nil {
				f = &core.RewindFile{Path: fc.Path, Target: fc.BeforeHash, Mode: fc.BeforeMode}
				byPath[fc.Path] = f
				order = append(order, fc.Path)
				if fc.BytesMissing && fc.BeforeHash != "" {
					missing[fc.Path] = true
				}
			}
			f.Expected = fc.AfterHash
		}
	}
	out := make([]core.RewindFile, 0, len(order))
	for _, p := range order {
		f := *byPath[p]
		cur, err := rr.hash(f.Path)
		switch {
		case f.Target == "":
			f.Action = RewindDelete
		default:
			f.Action = RewindRestore
		}
		switch {
		case err != nil:
			f.Reason = err.Error()
		case cur == f.Target:
			f.Action, f.Restorable = RewindNone, true
		case cur != f.Expected:
			f.Reason = "changed outside the session since it last wrote the file"
		case missing[f.Path] || (f.Target != "" && rw.cfg.Blobs == nil):
			f.Reason = "the earlier content was too large to keep"
		case f.Target != "":
			if _, err := rw.cfg.Blobs.Read(f.Target); err != nil {
				f.Reason = "the earlier content is no longer in the artifact store"
			} else {
				f.Restorable = true
			}
		default:
			f.Restorable = true
		}
		out = append(out, f)
	}
	return out
}

// fileStateToken digests the current on-disk state of every file a rewind
// would touch.
func fileStateToken(rr *restoreRoot, files []core.RewindFile) string {
	h := sha256.New()
	for _, f := range files {
		cur, err := rr.hash(f.Path)
		if err != nil {
			cur = "error:" + err.Error()
		}
		fmt.Fprintf(h, "%s\x00%s\n", f.Path, cur)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Confirm re-checks the preview (CONFLICT when history or files moved,
// or while a turn runs), restores the restorable files in reverse order of
// change (temp file + rename), then appends history_rewound, which marks
// messageSeq and everything after it inactive without touching payloads
// (MSG-13). It returns the outcome per file and the text for the input box.
func (rw *Rewinder) Confirm(ctx context.Context, sessionID string, messageSeq, headSeq int64, token string) (RewindPreview, error) {
	rt := rw.runtimes.get(sessionID)
	rt.mu.Lock()
	if rt.turn != nil || rt.busy != "" {
		rt.mu.Unlock()
		return RewindPreview{}, core.Errorf(core.CodeConflict, "session %s is busy (a turn or compaction runs); stop it before rewinding", sessionID)
	}
	rt.busy = "rewind"
	rt.mu.Unlock()
	defer func() {
		rt.mu.Lock()
		rt.busy = ""
		rt.mu.Unlock()
	}()
	p, err := rw.Preview(ctx, sessionID, messageSeq)
	if err != nil {
		return RewindPreview{}, err
	}
	if p.HeadSeq != headSeq {
		return RewindPreview{}, core.Errorf(core.CodeConflict, "the history moved since the preview (head %d, was %d); preview again", p.HeadSeq, headSeq)
	}
	if p.FileStateToken != token {
		return RewindPreview{}, core.Errorf(core.CodeConflict, "files changed since the preview; preview again")
	}
	s, err := rw.svc.Session(ctx, sessionID)
	if err != nil {
		return RewindPreview{}, err
	}
	dir, err := rw.dirs.workDir(ctx, s)
	if err != nil {
		return RewindPreview{}, err
	}
	rr := rw.cfg.openRestoreRoot(dir)
	defer rr.Close()
	for i := len(p.Files) - 1; i >= 0; i-- {
		f := &p.Files[i]
		if !f.Restorable || f.Action == RewindNone {
			continue
		}
		if err := rw.restoreFile(rr, *f); err != nil {
			f.Restorable, f.Reason = false, "restore failed: "+err.Error()
			continue
		}
		f.Restored = true
	}
	ev, err := core.NewEvent(sessionID, core.EventHistoryRewound, core.RewindPayload{FromSeq: messageSeq, Text: p.Text, Files: p.Files})
	if err != nil {
		return RewindPreview{}, err
	}
	unlock := rw.svc.Lock(sessionID)
	_, err = rw.svc.Commit(ctx, sessionID, headSeq, ev)
	unlock()
	if err != nil {
		return RewindPreview{}, fmt.Errorf("record rewind: %w", err)
	}
	rw.log.Info("history rewound", "session_id", sessionID, "from_seq", messageSeq, "files", len(p.Files))
	return p, nil
}

// restoreFile puts one file back through rr (os.Root, no symlink followed,
// the data directory and .git refused at this moment, not at the preview):
// deleted when the rewound part created it, else the recorded content with
// its recorded mode.
func (rw *Rewinder) restoreFile(rr *restoreRoot, f core.RewindFile) error {
	if f.Action == RewindDelete {
		return rr.remove(f.Path)
	}
	data, err := rw.cfg.Blobs.Read(f.Target)
	if err != nil {
		return err
	}
	return rr.write(f.Path, data, restoreMode(f.Mode))
}
