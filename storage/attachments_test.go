package storage_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/artifacts"
)

func TestAttachments(t *testing.T) {
	forEachDialect(t, testAttachments)
}

func testAttachments(t *testing.T, db *storage.DB) {
	ctx := context.Background()
	img := core.Attachment{
		ID: "att_1", Name: "shot.png", Kind: "image", MediaType: "image/png",
		Size: 1234, Width: 800, Height: 600, SHA256: strings.Repeat("ab", 32),
	}
	file := core.Attachment{ID: "att_2", Name: "notes.pdf", Kind: "file", MediaType: "application/pdf", Size: 99, SHA256: strings.Repeat("cd", 32)}

	for _, a := range []core.Attachment{img, file} {
		if err := db.CreateAttachment(ctx, a); err != nil {
			t.Fatalf("create %s: %v", a.ID, err)
		}
	}
	for _, want := range []core.Attachment{img, file} {
		got, err := db.Attachment(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("Attachment(%s) = %+v, want %+v", want.ID, got, want)
		}
	}

	if _, err := db.Attachment(ctx, "att_missing"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("missing attachment: %v, want NOT_FOUND", err)
	}
	if err := db.CreateAttachment(ctx, img); !errors.Is(err, core.ErrConflict) {
		t.Errorf("duplicate id: %v, want CONFLICT", err)
	}
	if err := db.CreateAttachment(ctx, core.Attachment{Name: "x"}); core.ErrorCode(err) != core.CodeBadInput {
		t.Errorf("empty id: %v, want BAD_INPUT", err)
	}
}

// TestAttachmentToProviderView runs an image from upload to the provider
// view: artifact store, Describe, attachment record, input validation and
// image loading at request time.
func TestAttachmentToProviderView(t *testing.T) {
	db := openTestDB(t)
	store, err := artifacts.New(filepath.Join(t.TempDir(), "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	hash, size, err := store.Put(ctx, bytes.NewReader(data), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	kind, mediaType, w, h, err := artifacts.Describe("shot.png", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	att := core.Attachment{ID: core.NewID("att"), Name: "shot.png", Kind: kind, MediaType: mediaType, Size: size, Width: w, Height: h, SHA256: hash}
	if err := db.CreateAttachment(ctx, att); err != nil {
		t.Fatal(err)
	}

	lookup := func(id string) (core.Attachment, error) { return db.Attachment(ctx, id) }
	in := core.UserInput{AttachmentIDs: []string{att.ID}}
	atts, err := engine.ValidateUserInput(in, lookup, core.Capabilities{})
	if err != nil {
		t.Fatal(err)
	}
	no := false
	if _, err := engine.ValidateUserInput(in, lookup, core.Capabilities{ImageInput: &no}); core.ErrorCode(err) != core.CodeBadInput {
		t.Errorf("image for a model without image input: %v, want BAD_INPUT", err)
	}
	if _, err := engine.ValidateUserInput(core.UserInput{AttachmentIDs: []string{"att_nope"}}, lookup, core.Capabilities{}); core.ErrorCode(err) != core.CodeBadInput {
		t.Errorf("unknown attachment: %v, want BAD_INPUT", err)
	}

	msgs := []core.Message{{Seq: 1, Role: core.RoleUser, Attachments: atts}}
	view, err := session.ProviderView(msgs, session.ViewOptions{LoadImage: func(a core.Attachment) ([]byte, error) { return store.Read(a.SHA256) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(view) != 1 || len(view[0].Content) != 1 {
		t.Fatalf("view = %+v", view)
	}
	part := view[0].Content[0]
	if part.Type != "image" || part.MediaType != "image/png" || !bytes.Equal(part.Data, data) {
		t.Errorf("image part = %s %s %d bytes, want the stored PNG", part.Type, part.MediaType, len(part.Data))
	}
}
