package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/mcp"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/catalogfile"
)

// openCatalogStores returns the catalog and MCP stores: the files in the
// data directory, or with a PostgreSQL database the shared tables, secrets
// sealed under the key of --secret-key-file (docs/postgresql.md). The MCP
// OAuth grants are always in the database, sealed under that key (on
// SQLite too: <data-dir>/secret-key by default).
func openCatalogStores(ctx context.Context, db *storage.DB, c Config, dataDir string) (core.CatalogStore, core.MCPStore, core.MCPAuthStore, error) {
	path := c.SecretKeyFile
	if path == "" {
		path = filepath.Join(dataDir, storage.SecretKeyFileName)
	}
	key, err := storage.LoadOrCreateSecretKey(path)
	if err != nil {
		return nil, nil, nil, err
	}
	sealer, err := storage.NewSealer(key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := db.CheckSecretKey(ctx, sealer); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Database == "" {
		cat, err := catalogfile.New(dataDir)
		if err != nil {
			return nil, nil, nil, err
		}
		mcp, err := catalogfile.NewMCP(dataDir)
		if err != nil {
			return nil, nil, nil, err
		}
		return cat, mcp, db.MCPAuthStore(sealer), nil
	}
	return db.CatalogStore(sealer), db.MCPStore(sealer), db.MCPAuthStore(sealer), nil
}

// catalogSyncInterval is how often a kernel on a shared database looks for
// MCP server and catalog changes made by other kernels when nothing reads
// them (reads check at once); MCP servers start or stop on this kernel
// within it.
const catalogSyncInterval = 2 * time.Second

func syncSharedCatalog(ctx context.Context, cat *catalog.Catalog, mcp *mcp.Service, log *slog.Logger) {
	t := time.NewTicker(catalogSyncInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := cat.Sync(ctx); err != nil && ctx.Err() == nil {
			log.Warn("could not check the shared catalog for changes", "err", err)
		}
		if err := mcp.Sync(ctx); err != nil && ctx.Err() == nil {
			log.Warn("could not check the shared MCP servers for changes", "err", err)
		}
	}
}
