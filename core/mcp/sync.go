package mcp

import (
	"context"
	"github.com/foya-dev/foya/core"
)

// Sync reloads the MCP servers when their store is shared and another
// kernel changed them, applies them to this kernel's runtime and announces
// catalog_updated.
func (s *Service) Sync(ctx context.Context) error {
	changed, err := core.ChangedElsewhere(ctx, s.store)
	if err != nil || !changed {
		return err
	}
	s.mu.Lock()
	if changed, err := core.ChangedElsewhere(ctx, s.store); err != nil || !changed {
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

func (s *Service) reloadLocked(ctx context.Context) error {
	servers, err := s.store.Load(ctx)
	if err != nil {
		return err
	}
	s.servers = servers
	s.log.InfoContext(ctx, "MCP servers reloaded: changed by another kernel")
	return nil
}

func (s *Service) syncQuiet(ctx context.Context) {
	if err := s.Sync(ctx); err != nil {
		s.log.WarnContext(ctx, "could not check the shared MCP servers for changes", "err", err)
	}
}
