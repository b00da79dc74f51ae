package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/foya-dev/foya/core"
)

// RotateSecretKey re-seals every secret the database holds under to, in
// one transaction: the connections' API keys and the MCP servers' env,
// header and OAuth client secret values (shared catalog on PostgreSQL),
// the MCP OAuth grants, and the key check. Each value must open with from
// (a value that does not stops the rotation and changes nothing). It
// returns how many values it re-sealed. Run it with every kernel on the
// database stopped: a running kernel still holds the old key.
func (d *DB) RotateSecretKey(ctx context.Context, from, to *Sealer) (int, error) {
	n := 0
	reseal := func(sealed, aad, what string) (string, error) {
		plain, err := from.Open(sealed, aad)
		if err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		n++
		return to.Seal(plain, aad)
	}
	err := d.w.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var check catalogStateRow
		err := tx.NewSelect().Model(&check).Where("name = ?", stateSecretCheck).Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return errors.New("the database has no secret key check: no kernel has used it yet, so there is nothing to rotate")
		}
		if err != nil {
			return fmt.Errorf("read secret key check: %w", err)
		}
		if plain, err := from.Open(check.Body, stateSecretCheck); err != nil || plain != secretCheckText {
			return errors.New("the current key does not open the database's secrets: name the key its kernels run with (--secret-key-file)")
		}
		if check.Body, err = to.Seal(secretCheckText, stateSecretCheck); err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model(&check).Column("body").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("update secret key check: %w", err)
		}

		var conns []catalogConnectionRow
		if err := tx.NewSelect().Model(&conns).Where("api_key <> ''").Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read connections: %w", err)
		}
		for i := range conns {
			if conns[i].APIKey, err = reseal(conns[i].APIKey, apiKeyAAD(conns[i].ID), "API key of connection "+conns[i].ID); err != nil {
				return err
			}
			if _, err := tx.NewUpdate().Model(&conns[i]).Column("api_key").WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("update connection %s: %w", conns[i].ID, err)
			}
		}

		var servers []mcpServerDBRow
		if err := tx.NewSelect().Model(&servers).Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read MCP servers: %w", err)
		}
		for i := range servers {
			var c core.MCPServerConfig
			if err := json.Unmarshal([]byte(servers[i].Body), &c); err != nil {
				return fmt.Errorf("decode MCP server %s: %w", servers[i].ID, err)
			}
			for _, kvs := range []struct {
				kind string
				list []core.KeyValue
			}{{"env", c.Env}, {"header", c.Headers}} {
				for j, kv := range kvs.list {
					if kvs.list[j].Value, err = reseal(kv.Value, mcpAAD(c.ID, kvs.kind, kv.Key), fmt.Sprintf("%s %s of MCP server %s", kvs.kind, kv.Key, c.ID)); err != nil {
						return err
					}
				}
			}
			if c.OAuthClientSecret != "" {
				if c.OAuthClientSecret, err = reseal(c.OAuthClientSecret, mcpAAD(c.ID, "oauth", "clientSecret"), "OAuth client secret of MCP server "+c.ID); err != nil {
					return err
				}
			}
			body, err := json.Marshal(c)
			if err != nil {
				return fmt.Errorf("encode MCP server %s: %w", c.ID, err)
			}
			servers[i].Body = string(body)
			if _, err := tx.NewUpdate().Model(&servers[i]).Column("body").WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("update MCP server %s: %w", c.ID, err)
			}
		}

		var grants []mcpOAuthRow
		if err := tx.NewSelect().Model(&grants).Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read MCP OAuth grants: %w", err)
		}
		for i := range grants {
			if grants[i].Sealed, err = reseal(grants[i].Sealed, mcpGrantAAD(grants[i].ServerID), "OAuth grant of MCP server "+grants[i].ServerID); err != nil {
				return err
			}
			if _, err := tx.NewUpdate().Model(&grants[i]).Column("sealed").WherePK().Exec(ctx); err != nil {
				return fmt.Errorf("update MCP OAuth grant %s: %w", grants[i].ServerID, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("rotate the secret key: %w", err)
	}
	return n, nil
}

// LiveNodes lists the kernels heard from on a PostgreSQL database in the
// last minute (package cluster's nodes table; none when no kernel ever
// ran there, or on SQLite).
func (d *DB) LiveNodes(ctx context.Context) ([]string, error) {
	if d.w.Dialect().Name() != dialect.PG {
		return nil, nil
	}
	var exists bool
	if err := d.w.NewRaw("SELECT to_regclass('nodes') IS NOT NULL").Scan(ctx, &exists); err != nil {
		return nil, fmt.Errorf("look for the nodes table: %w", err)
	}
	if !exists {
		return nil, nil
	}
	var ids []string
	if err := d.w.NewRaw("SELECT id FROM nodes WHERE last_heartbeat > now() - interval '1 minute' ORDER BY id").Scan(ctx, &ids); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("list live nodes: %w", err)
	}
	return ids, nil
}
