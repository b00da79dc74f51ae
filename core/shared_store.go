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
// catalog.Catalog and mcp.Service then reload and apply the change once more.
var ErrStale = &Error{Code: CodeConflict, Message: "the catalog was changed by another kernel meanwhile; try again"}

// IsStale reports whether err is a save refused because another kernel
// saved first (ErrStale).
func IsStale(err error) bool { return errors.Is(err, ErrStale) }

// ChangedElsewhere reports whether store is shared and holds a newer
// version than the one last loaded or saved through it.
func ChangedElsewhere(ctx context.Context, store any) (bool, error) {
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
