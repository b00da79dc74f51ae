package graph_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/core/session"
)

// BenchmarkFork10k forks a session of 10,000 messages (one transaction that
// imports them all).
func BenchmarkFork10k(b *testing.B) {
	k := newTestKernel(b)
	ctx := context.Background()
	s, err := k.svc.CreateSession(ctx, core.CreateSessionInput{Title: "big"})
	if err != nil {
		b.Fatal(err)
	}
	var last []core.Event
	for i := 0; i < 10; i++ {
		batch := make([]core.Event, 1000)
		for j := range batch {
			role := core.RoleUser
			if j%2 == 1 {
				role = core.RoleAssistant
			}
			batch[j] = coretest.MessageEvent(b, s.ID, role, fmt.Sprintf("message %d of a long conversation with some realistic length to it", i*1000+j))
		}
		if last, err = k.svc.Append(ctx, s.ID, batch...); err != nil {
			b.Fatal(err)
		}
	}
	through := last[len(last)-1].Seq
	b.ResetTimer()
	for b.Loop() {
		if _, err := k.svc.ForkSession(ctx, s.ID, through, session.ForkOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPreviewRewind200 previews a rewind over 200 files the session
// changed (hashing each file on disk and checking the stored bytes).
func BenchmarkPreviewRewind200(b *testing.B) {
	k := newTestKernel(b)
	ctx := context.Background()
	dir := b.TempDir()
	p, err := k.svc.CreateProject(ctx, core.ProjectInput{Path: dir})
	if err != nil {
		b.Fatal(err)
	}
	s, err := k.svc.CreateSession(ctx, core.CreateSessionInput{ProjectID: p.ID})
	if err != nil {
		b.Fatal(err)
	}
	user := coretest.MessageEvent(b, s.ID, core.RoleUser, "change 200 files")
	evs := []core.Event{user}
	for i := range 200 {
		before := bytes.Repeat([]byte(fmt.Sprintf("before %d\n", i)), 200)
		after := bytes.Repeat([]byte(fmt.Sprintf("after %d\n", i)), 200)
		bh, _, err := k.blobs.Put(ctx, bytes.NewReader(before), 0)
		if err != nil {
			b.Fatal(err)
		}
		ah, _, _ := k.blobs.Put(ctx, bytes.NewReader(after), 0)
		name := fmt.Sprintf("f%03d.txt", i)
		if err := os.WriteFile(filepath.Join(dir, name), after, 0o644); err != nil {
			b.Fatal(err)
		}
		ev, _ := core.NewEvent(s.ID, core.EventMessageEnd, core.MessagePayload{Message: core.Message{
			Role: core.RoleTool, ToolCallID: fmt.Sprint("c", i), ToolName: "write", Text: "ok",
			FileChanges: []core.FileChange{{Path: name, Action: core.FileModify, BeforeHash: bh, AfterHash: ah}},
		}})
		evs = append(evs, ev)
	}
	out, err := k.svc.Append(ctx, s.ID, evs...)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		pv, err := k.engine.Rewind().Preview(ctx, s.ID, out[0].Seq)
		if err != nil || len(pv.Files) != 200 || !pv.Files[199].Restorable {
			b.Fatalf("preview: %v %d", err, len(pv.Files))
		}
	}
}
