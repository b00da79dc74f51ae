package catalog

import (
	"context"
	"github.com/foya-dev/foya/core"
)

// Sync reloads the catalog when its store is shared and another kernel
// changed it since this one last read or wrote it. Reads call it (and only
// log its error, going on with what is in memory).
func (c *Catalog) Sync(ctx context.Context) error {
	changed, err := core.ChangedElsewhere(ctx, c.store)
	if err != nil || !changed {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if changed, err := core.ChangedElsewhere(ctx, c.store); err != nil || !changed {
		return err
	}
	return c.reloadLocked(ctx)
}

// reloadLocked replaces the in-memory catalog with the store's. c.mu is
// held.
func (c *Catalog) reloadLocked(ctx context.Context) error {
	data, err := c.store.Load(ctx)
	if err != nil {
		return err
	}
	c.data = normalizeLoaded(ctx, data, c.log)
	c.routes.ClearAll()
	c.log.InfoContext(ctx, "catalog reloaded: changed by another kernel")
	return nil
}

func (c *Catalog) syncQuiet(ctx context.Context) {
	if err := c.Sync(ctx); err != nil {
		c.log.WarnContext(ctx, "could not check the shared catalog for changes", "err", err)
	}
}
