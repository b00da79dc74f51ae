package graph

import (
	"context"
	"path/filepath"

	"github.com/foya-dev/foya/core"
)

// backupDatabase writes a live copy of the database (storage's Backup
// checks the path) and returns the path written.
func (r *mutationResolver) backupDatabase(ctx context.Context, path string) (string, error) {
	if r.Backup == nil {
		return "", core.Errorf(core.CodeUnavailable, "backupDatabase: this kernel has no database backup")
	}
	if err := r.Backup.Backup(ctx, path); err != nil {
		return "", err
	}
	r.Log.Info("database backed up", "path", filepath.Clean(path))
	return filepath.Clean(path), nil
}
