package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

// MCP OAuth grants (client, endpoints, access and refresh tokens) live in
// mcp_oauth, one row per server, the whole grant sealed with the Sealer
// (the same AES-256-GCM under the secret key as API keys), bound to its
// row by the additional data "mcp/<id>/oauth/grant": no column holds a
// token in plain text.

type mcpOAuthRow struct {
	bun.BaseModel `bun:"table:mcp_oauth"`

	ServerID  string `bun:"server_id,pk"`
	Sealed    string `bun:"sealed,notnull"`
	UpdatedAt int64  `bun:"updated_at,notnull"`
}

// MCPAuthStore implements core.MCPAuthStore in the database.
type MCPAuthStore struct {
	db   *DB
	seal *Sealer
	// mu serializes updates within this process; on PostgreSQL the row
	// lock serializes them between kernels too.
	mu sync.Mutex
}

var _ core.MCPAuthStore = (*MCPAuthStore)(nil)

// MCPAuthStore returns the database's store of MCP OAuth grants, sealed
// with s.
func (d *DB) MCPAuthStore(s *Sealer) *MCPAuthStore { return &MCPAuthStore{db: d, seal: s} }

func mcpGrantAAD(serverID string) string { return "mcp/" + serverID + "/oauth/grant" }

func (a *MCPAuthStore) open(r mcpOAuthRow) (core.MCPOAuthGrant, error) {
	plain, err := a.seal.Open(r.Sealed, mcpGrantAAD(r.ServerID))
	if err != nil {
		return core.MCPOAuthGrant{}, fmt.Errorf("OAuth grant of MCP server %s: %w", r.ServerID, err)
	}
	var g core.MCPOAuthGrant
	if err := json.Unmarshal([]byte(plain), &g); err != nil {
		return core.MCPOAuthGrant{}, fmt.Errorf("decode OAuth grant of MCP server %s: %w", r.ServerID, err)
	}
	return g, nil
}

func (a *MCPAuthStore) row(serverID string, g core.MCPOAuthGrant) (mcpOAuthRow, error) {
	body, err := json.Marshal(g)
	if err != nil {
		return mcpOAuthRow{}, fmt.Errorf("encode OAuth grant: %w", err)
	}
	sealed, err := a.seal.Seal(string(body), mcpGrantAAD(serverID))
	if err != nil {
		return mcpOAuthRow{}, err
	}
	return mcpOAuthRow{ServerID: serverID, Sealed: sealed, UpdatedAt: time.Now().UnixMilli()}, nil
}

// LoadMCPAuth implements core.MCPAuthStore.
func (a *MCPAuthStore) LoadMCPAuth(ctx context.Context, serverID string) (core.MCPOAuthGrant, bool, error) {
	var r mcpOAuthRow
	err := a.db.r.NewSelect().Model(&r).Where("server_id = ?", serverID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return core.MCPOAuthGrant{}, false, nil
	}
	if err != nil {
		return core.MCPOAuthGrant{}, false, fmt.Errorf("read OAuth grant of MCP server %s: %w", serverID, err)
	}
	g, err := a.open(r)
	return g, err == nil, err
}

func (a *MCPAuthStore) put(ctx context.Context, db bun.IDB, serverID string, g core.MCPOAuthGrant) error {
	r, err := a.row(serverID, g)
	if err != nil {
		return err
	}
	if _, err := db.NewInsert().Model(&r).On("CONFLICT (server_id) DO UPDATE").
		Set("sealed = EXCLUDED.sealed").Set("updated_at = EXCLUDED.updated_at").Exec(ctx); err != nil {
		return fmt.Errorf("save OAuth grant of MCP server %s: %w", serverID, err)
	}
	return nil
}

// SaveMCPAuth implements core.MCPAuthStore.
func (a *MCPAuthStore) SaveMCPAuth(ctx context.Context, serverID string, g core.MCPOAuthGrant) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.put(ctx, a.db.w, serverID, g)
}

// UpdateMCPAuth implements core.MCPAuthStore: on PostgreSQL one
// transaction that reads the row with FOR UPDATE, so kernels sharing the
// database take turns; on SQLite one kernel owns the data directory and
// the process lock is enough (no write transaction is held while fn waits
// for the network: it would stall every other write of the kernel).
func (a *MCPAuthStore) UpdateMCPAuth(ctx context.Context, serverID string, fn func(core.MCPOAuthGrant, bool) (core.MCPOAuthGrant, error)) (core.MCPOAuthGrant, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.db.pg {
		cur, ok, err := a.LoadMCPAuth(ctx, serverID)
		if err != nil {
			return core.MCPOAuthGrant{}, err
		}
		next, err := fn(cur, ok)
		if err != nil {
			return next, err
		}
		if ok && next == cur {
			return next, nil
		}
		return next, a.put(ctx, a.db.w, serverID, next)
	}
	var out core.MCPOAuthGrant
	err := a.db.w.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var r mcpOAuthRow
		q := tx.NewSelect().Model(&r).Where("server_id = ?", serverID).For("UPDATE")
		var cur core.MCPOAuthGrant
		err := q.Scan(ctx)
		ok := err == nil
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("lock OAuth grant of MCP server %s: %w", serverID, err)
		default:
			if cur, err = a.open(r); err != nil {
				return err
			}
		}
		next, err := fn(cur, ok)
		if err != nil {
			return err
		}
		out = next
		if ok && next == cur {
			return nil
		}
		return a.put(ctx, tx, serverID, next)
	})
	return out, err
}

// DeleteMCPAuth implements core.MCPAuthStore.
func (a *MCPAuthStore) DeleteMCPAuth(ctx context.Context, serverID string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.db.w.NewDelete().Model((*mcpOAuthRow)(nil)).Where("server_id = ?", serverID).Exec(ctx); err != nil {
		return fmt.Errorf("forget OAuth grant of MCP server %s: %w", serverID, err)
	}
	return nil
}
