package graph_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/core/pubsub"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/storage"
)

// failingImport is the real store whose import transaction fails.
type failingImport struct{ *storage.DB }

func (failingImport) ImportSession(context.Context, string, []core.Event, []core.Attachment) ([]core.Event, error) {
	return nil, errors.New("disk full")
}

// When the import's transaction fails, the blobs the import stored are
// removed again and a blob that was already stored stays: nothing of the
// import is left.
func TestImportRollbackRemovesItsBlobs(t *testing.T) {
	k := newTestKernel(t, func(c *engine.Config) {
		db := c.Attachments.(*storage.DB)
		svc, err := session.New(session.Config{Store: failingImport{db}, Broker: pubsub.New(pubsub.Config{})})
		if err != nil {
			t.Fatal(err)
		}
		c.Sessions = svc
	})
	png := pngBytes(t)
	k.upload(t, "dot.png", png) // already stored before the import
	before, after := []byte("before the edit\n"), []byte("after the edit\n")
	pngHash, beforeHash, afterHash := sha(string(png)), sha(string(before)), sha(string(after))

	now := time.Now().UTC()
	mk := func(typ core.EventType, p any) core.Event {
		ev, err := core.NewEvent("ses_src", typ, p)
		if err != nil {
			t.Fatal(err)
		}
		ev.At = now
		return ev
	}
	events := []core.Event{
		mk(core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: "ses_src", ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: now}}),
		mk(core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleUser, Text: "look",
			Attachments: []core.Attachment{{ID: "att_src", Name: "dot.png", Kind: "image", MediaType: "image/png", Size: int64(len(png)), SHA256: pngHash}}}}),
		mk(core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleTool, Text: "edited", ToolCallID: "c1", ToolName: "edit",
			FileChanges: []core.FileChange{{Path: "f.txt", Action: core.FileModify, BeforeHash: beforeHash, AfterHash: afterHash}}}}),
	}
	for i := range events {
		events[i].Seq = int64(i) + 1
	}
	var doc bytes.Buffer
	blobs := map[string][]byte{pngHash: png, beforeHash: before, afterHash: after}
	if err := archive.WriteSessionArchive(&doc, archive.ArchiveHeader{SessionID: "ses_src", ExportedAt: now}, events, []string{pngHash, beforeHash, afterHash}, blobs); err != nil {
		t.Fatal(err)
	}

	k.mustFail(t, "INTERNAL", importQ, map[string]any{"d": doc.String()})
	if !k.blobs.Has(pngHash) {
		t.Fatal("the failed import removed a blob that was stored before it")
	}
	if k.blobs.Has(beforeHash) || k.blobs.Has(afterHash) {
		t.Fatal("the failed import left the blobs it stored")
	}
}
