package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
	"github.com/foya-dev/foya/core/engine"
)

// importSessionFile serves importSessionFile: an upload over the size of
// a foya.session document is refused before it is read.
func importSessionFile(ctx context.Context, e *engine.Engine, file graphql.Upload, projectID string) (*core.Session, error) {
	if file.Size > archive.MaxImportBytes {
		return nil, core.Errorf(core.CodeBadInput, "the file is %d bytes; a foya.session document may have at most %d MiB", file.Size, archive.MaxImportBytes>>20)
	}
	return ptr(e.Archive().Import(ctx, file.File, projectID))
}
