package core

import (
	"context"
	"errors"
)

// VersionedStore is implemented by catalog and MCP stores that several
// kernels share (the PostgreSQL ones). Every save raises the version; a
// kernel whose in-memory copy is older reloads before it reads or changes
// anything, so a change made on one kernel is used by the next turn on any
// other. Such a store refuses a Save over a version newer than the one it
// last loaded or saved with an error matching ErrStale.
type VersionedStore interface {
	// Version is the shared store's current version.
	Version(ctx context.Context) (int64, error)
	// LoadedVersion is the version of this store's last Load or Save.
	LoadedVersion() int64
}

// ErrStale matches a save refused because another kernel saved first; the
// Catalog and the MCPService then reload and apply the change once more.
var ErrStale = &Error{Code: CodeConflict, Message: "the catalog was changed by another kernel meanwhile; try again"}

func isStale(err error) bool { return errors.Is(err, ErrStale) }

// changedElsewhere reports whether store is shared and holds a newer
// version than the one last loaded or saved through it.
func changedElsewhere(ctx context.Context, store any) (bool, error) {
	vs, ok := store.(VersionedStore)
	if !ok {
		return false, nil
	}
	v, err := vs.Version(ctx)
	if err != nil {
		return false, err
	}
	return v != vs.LoadedVersion(), nil
}

// Sync reloads the catalog when its store is shared and another kernel
// changed it since this one last read or wrote it. Reads call it (and only
// log its error, going on with what is in memory).
func (c *Catalog) Sync(ctx context.Context) error {
	changed, err := changedElsewhere(ctx, c.store)
	if err != nil || !changed {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if changed, err := changedElsewhere(ctx, c.store); err != nil || !changed {
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

// Sync reloads the MCP servers when their store is shared and another
// kernel changed them, applies them to this kernel's runtime and announces
// catalog_updated.
func (s *MCPService) Sync(ctx context.Context) error {
	changed, err := changedElsewhere(ctx, s.store)
	if err != nil || !changed {
		return err
	}
	s.mu.Lock()
	if changed, err := changedElsewhere(ctx, s.store); err != nil || !changed {
		s.mu.Unlock()
		return err
	}
	if err := s.reloadLocked(ctx); err != nil {
		s.mu.Unlock()
		return err
	}
	snap := s.runtimeSet() // servers attached to sessions keep running
	s.mu.Unlock()
	s.runtime.Apply(ctx, snap)
	s.Changed("")
	return nil
}

func (s *MCPService) reloadLocked(ctx context.Context) error {
	servers, err := s.store.Load(ctx)
	if err != nil {
		return err
	}
	s.servers = servers
	s.log.InfoContext(ctx, "MCP servers reloaded: changed by another kernel")
	return nil
}

func (s *MCPService) syncQuiet(ctx context.Context) {
	if err := s.Sync(ctx); err != nil {
		s.log.WarnContext(ctx, "could not check the shared MCP servers for changes", "err", err)
	}
}
