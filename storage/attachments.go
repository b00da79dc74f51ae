package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

var _ core.AttachmentStore = (*DB)(nil)

type attachmentRow struct {
	bun.BaseModel `bun:"table:attachments"`

	ID        string `bun:"id,pk"`
	Name      string `bun:"name,notnull"`
	Kind      string `bun:"kind,notnull"`
	MediaType string `bun:"media_type,notnull"`
	Size      int64  `bun:"size,notnull"`
	Width     int    `bun:"width,notnull"`
	Height    int    `bun:"height,notnull"`
	SHA256    string `bun:"sha256,notnull"`
	CreatedAt string `bun:"created_at,notnull"`
}

func (r attachmentRow) attachment() core.Attachment {
	return core.Attachment{
		ID: r.ID, Name: r.Name, Kind: r.Kind, MediaType: r.MediaType,
		Size: r.Size, Width: r.Width, Height: r.Height, SHA256: r.SHA256,
	}
}

// CreateAttachment implements core.AttachmentStore. core.Attachment has no
// time of its own, so created_at is the time of the insert.
func (d *DB) CreateAttachment(ctx context.Context, a core.Attachment) error {
	if a.ID == "" {
		return core.Errorf(core.CodeBadInput, "attachment id: empty")
	}
	row := attachmentRow{
		ID: a.ID, Name: a.Name, Kind: a.Kind, MediaType: a.MediaType,
		Size: a.Size, Width: a.Width, Height: a.Height, SHA256: a.SHA256,
		CreatedAt: fmtTime(time.Now()),
	}
	return d.w.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		exists, err := tx.NewSelect().Model((*attachmentRow)(nil)).Where("id = ?", a.ID).Exists(ctx)
		if err != nil {
			return fmt.Errorf("find attachment %s: %w", a.ID, err)
		}
		if exists {
			return core.Errorf(core.CodeConflict, "attachment %s already exists", a.ID)
		}
		if _, err := tx.NewInsert().Model(&row).Exec(ctx); err != nil {
			if isUniqueViolation(err) {
				return core.Errorf(core.CodeConflict, "attachment %s already exists", a.ID)
			}
			return fmt.Errorf("insert attachment %s: %w", a.ID, err)
		}
		return nil
	})
}

// Attachment implements core.AttachmentStore.
func (d *DB) Attachment(ctx context.Context, id string) (core.Attachment, error) {
	var row attachmentRow
	err := d.r.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return core.Attachment{}, core.Errorf(core.CodeNotFound, "attachment %s not found", id)
	}
	if err != nil {
		return core.Attachment{}, fmt.Errorf("read attachment %s: %w", id, err)
	}
	return row.attachment(), nil
}
