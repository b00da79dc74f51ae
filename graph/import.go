package graph

import (
	"context"
	"io"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
)

// importSession runs an import for importSession and importSessionFile.
func importSession(ctx context.Context, e *engine.Engine, r io.Reader, projectID string) (*core.Session, error) {
	s, err := e.Archive().Import(ctx, r, projectID)
	if err != nil {
		return nil, err
	}
	return &s, nil
}
