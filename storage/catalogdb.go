package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/foya-dev/foya/core"
)

// The shared catalog: with PostgreSQL, connections, default models and MCP
// servers live in the database so that every kernel on it sees the same
// catalog. Secrets (API keys, MCP env and header values) are sealed with
// the Sealer; the database never holds them in plain text.
//
// Each catalog has a version in catalog_state, raised by every save. A
// store remembers the version it last read or wrote, and a save over a
// newer version (another kernel changed the catalog meanwhile) is refused
// with core.ErrStale; the core services then reload and apply the change
// again. Version lets them notice a change made elsewhere before a read.

const (
	stateCatalog     = "catalog"
	stateMCP         = "mcp"
	stateSecretCheck = "secret_check"
	secretCheckText  = "foya secret key check"
)

type catalogStateRow struct {
	bun.BaseModel `bun:"table:catalog_state"`

	Name    string `bun:"name,pk"`
	Version int64  `bun:"version,notnull"`
	Body    string `bun:"body,notnull"`
}

type catalogConnectionRow struct {
	bun.BaseModel `bun:"table:catalog_connections"`

	ID       string `bun:"id,pk"`
	Position int    `bun:"position,notnull"`
	Body     string `bun:"body,notnull"`
	APIKey   string `bun:"api_key,notnull"`
}

type mcpServerDBRow struct {
	bun.BaseModel `bun:"table:mcp_servers"`

	ID       string `bun:"id,pk"`
	Position int    `bun:"position,notnull"`
	Body     string `bun:"body,notnull"`
}

// CheckSecretKey makes sure the database's secrets open with s: the first
// kernel records a sealed check value; a kernel started with another key
// file fails here, at start, rather than at the first use of a key.
func (d *DB) CheckSecretKey(ctx context.Context, s *Sealer) error {
	var row catalogStateRow
	err := d.r.NewSelect().Model(&row).Where("name = ?", stateSecretCheck).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		sealed, err := s.Seal(secretCheckText, stateSecretCheck)
		if err != nil {
			return err
		}
		if _, err := d.w.NewInsert().Model(&catalogStateRow{Name: stateSecretCheck, Body: sealed}).
			On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
			return fmt.Errorf("record secret key check: %w", err)
		}
		return d.CheckSecretKey(ctx, s)
	}
	if err != nil {
		return fmt.Errorf("read secret key check: %w", err)
	}
	if plain, err := s.Open(row.Body, stateSecretCheck); err != nil || plain != secretCheckText {
		return fmt.Errorf("secret key check: the database's secrets were sealed under another key; start every kernel on this database with the same --secret-key-file")
	}
	return nil
}

// versioned is what the two catalog stores share.
type versioned struct {
	db    *DB
	seal  *Sealer
	state string

	mu   sync.Mutex
	seen int64
}

// Version implements core.VersionedStore: the catalog's version in the
// database (0 before the first save).
func (v *versioned) Version(ctx context.Context) (int64, error) {
	var row catalogStateRow
	err := v.db.r.NewSelect().Model(&row).Column("version").Where("name = ?", v.state).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s version: %w", v.state, err)
	}
	return row.Version, nil
}

// load runs read in a transaction with the state row and remembers its
// version.
func (v *versioned) load(ctx context.Context, read func(tx bun.Tx, body string) error) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.db.w.RunInTx(ctx, &sql.TxOptions{ReadOnly: true}, func(ctx context.Context, tx bun.Tx) error {
		var row catalogStateRow
		err := tx.NewSelect().Model(&row).Where("name = ?", v.state).Scan(ctx)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read %s state: %w", v.state, err)
		}
		if err := read(tx, row.Body); err != nil {
			return err
		}
		v.seen = row.Version
		return nil
	})
}

// save runs write in a transaction after checking that nobody saved since
// this store's last load or save, and raises the version.
func (v *versioned) save(ctx context.Context, body string, write func(tx bun.Tx) error) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	var next int64
	err := v.db.w.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(&catalogStateRow{Name: v.state}).On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
			return fmt.Errorf("create %s state: %w", v.state, err)
		}
		var row catalogStateRow
		q := tx.NewSelect().Model(&row).Where("name = ?", v.state)
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return fmt.Errorf("lock %s state: %w", v.state, err)
		}
		if row.Version != v.seen {
			return fmt.Errorf("%s is at version %d, this kernel read %d: %w", v.state, row.Version, v.seen, core.ErrStale)
		}
		if err := write(tx); err != nil {
			return err
		}
		next = row.Version + 1
		if _, err := tx.NewUpdate().Model(&catalogStateRow{Name: v.state, Version: next, Body: body}).WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("raise %s version: %w", v.state, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	v.seen = next
	return nil
}

// CatalogStore implements core.CatalogStore in the database.
type CatalogStore struct{ versioned }

var (
	_ core.CatalogStore   = (*CatalogStore)(nil)
	_ core.VersionedStore = (*CatalogStore)(nil)
)

// CatalogStore returns the database's catalog store, sealing API keys
// with s.
func (d *DB) CatalogStore(s *Sealer) *CatalogStore {
	return &CatalogStore{versioned{db: d, seal: s, state: stateCatalog}}
}

func apiKeyAAD(connID string) string { return "connection/" + connID + "/apiKey" }

// Load implements core.CatalogStore.
func (c *CatalogStore) Load(ctx context.Context) (core.CatalogData, error) {
	var out core.CatalogData
	err := c.load(ctx, func(tx bun.Tx, body string) error {
		out = core.CatalogData{}
		if body != "" {
			if err := json.Unmarshal([]byte(body), &out.Defaults); err != nil {
				return fmt.Errorf("decode default models: %w", err)
			}
		}
		var rows []catalogConnectionRow
		if err := tx.NewSelect().Model(&rows).Order("position", "id").Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read connections: %w", err)
		}
		for _, r := range rows {
			var conn core.Connection
			if err := json.Unmarshal([]byte(r.Body), &conn); err != nil {
				return fmt.Errorf("decode connection %s: %w", r.ID, err)
			}
			if r.APIKey != "" {
				key, err := c.seal.Open(r.APIKey, apiKeyAAD(r.ID))
				if err != nil {
					return fmt.Errorf("API key of connection %s: %w", r.ID, err)
				}
				conn.APIKey = key
			}
			out.Connections = append(out.Connections, conn)
		}
		return nil
	})
	if err != nil {
		return core.CatalogData{}, fmt.Errorf("load catalog: %w", err)
	}
	return out, nil
}

// Save implements core.CatalogStore: everything is replaced in one
// transaction.
func (c *CatalogStore) Save(ctx context.Context, data core.CatalogData) error {
	defaults, err := json.Marshal(data.Defaults)
	if err != nil {
		return fmt.Errorf("encode default models: %w", err)
	}
	rows := make([]catalogConnectionRow, len(data.Connections))
	for i, conn := range data.Connections {
		body, err := json.Marshal(conn) // APIKey is json:"-"
		if err != nil {
			return fmt.Errorf("encode connection %s: %w", conn.ID, err)
		}
		rows[i] = catalogConnectionRow{ID: conn.ID, Position: i, Body: string(body)}
		if conn.APIKey != "" {
			if rows[i].APIKey, err = c.seal.Seal(conn.APIKey, apiKeyAAD(conn.ID)); err != nil {
				return err
			}
		}
	}
	err = c.save(ctx, string(defaults), func(tx bun.Tx) error {
		if _, err := tx.NewDelete().Model((*catalogConnectionRow)(nil)).Where("1 = 1").Exec(ctx); err != nil {
			return fmt.Errorf("clear connections: %w", err)
		}
		if len(rows) > 0 {
			if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
				return fmt.Errorf("insert connections: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save catalog: %w", err)
	}
	return nil
}

// MCPStore implements core.MCPStore in the database.
type MCPStore struct{ versioned }

var (
	_ core.MCPStore       = (*MCPStore)(nil)
	_ core.VersionedStore = (*MCPStore)(nil)
)

// MCPStore returns the database's MCP server store, sealing env and header
// values with s.
func (d *DB) MCPStore(s *Sealer) *MCPStore {
	return &MCPStore{versioned{db: d, seal: s, state: stateMCP}}
}

func mcpAAD(serverID, kind, key string) string { return "mcp/" + serverID + "/" + kind + "/" + key }

// sealKVs returns kvs with every value sealed (seal) or opened (!seal).
func (m *MCPStore) sealKVs(kvs []core.KeyValue, serverID, kind string, seal bool) ([]core.KeyValue, error) {
	if kvs == nil {
		return nil, nil
	}
	out := make([]core.KeyValue, len(kvs))
	for i, kv := range kvs {
		var err error
		out[i].Key = kv.Key
		if seal {
			out[i].Value, err = m.seal.Seal(kv.Value, mcpAAD(serverID, kind, kv.Key))
		} else {
			out[i].Value, err = m.seal.Open(kv.Value, mcpAAD(serverID, kind, kv.Key))
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s of MCP server %s: %w", kind, kv.Key, serverID, err)
		}
	}
	return out, nil
}

// Load implements core.MCPStore.
func (m *MCPStore) Load(ctx context.Context) ([]core.MCPServerConfig, error) {
	var out []core.MCPServerConfig
	err := m.load(ctx, func(tx bun.Tx, _ string) error {
		out = nil
		var rows []mcpServerDBRow
		if err := tx.NewSelect().Model(&rows).Order("position", "id").Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read MCP servers: %w", err)
		}
		for _, r := range rows {
			var c core.MCPServerConfig
			if err := json.Unmarshal([]byte(r.Body), &c); err != nil {
				return fmt.Errorf("decode MCP server %s: %w", r.ID, err)
			}
			var err error
			if c.Env, err = m.sealKVs(c.Env, c.ID, "env", false); err != nil {
				return err
			}
			if c.Headers, err = m.sealKVs(c.Headers, c.ID, "header", false); err != nil {
				return err
			}
			if c.OAuthClientSecret != "" {
				if c.OAuthClientSecret, err = m.seal.Open(c.OAuthClientSecret, mcpAAD(c.ID, "oauth", "clientSecret")); err != nil {
					return fmt.Errorf("OAuth client secret of MCP server %s: %w", c.ID, err)
				}
			}
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load MCP servers: %w", err)
	}
	return out, nil
}

// Save implements core.MCPStore.
func (m *MCPStore) Save(ctx context.Context, servers []core.MCPServerConfig) error {
	rows := make([]mcpServerDBRow, len(servers))
	for i, c := range servers {
		var err error
		if c.Env, err = m.sealKVs(c.Env, c.ID, "env", true); err != nil {
			return err
		}
		if c.Headers, err = m.sealKVs(c.Headers, c.ID, "header", true); err != nil {
			return err
		}
		if c.OAuthClientSecret != "" {
			if c.OAuthClientSecret, err = m.seal.Seal(c.OAuthClientSecret, mcpAAD(c.ID, "oauth", "clientSecret")); err != nil {
				return fmt.Errorf("OAuth client secret of MCP server %s: %w", c.ID, err)
			}
		}
		body, err := json.Marshal(c)
		if err != nil {
			return fmt.Errorf("encode MCP server %s: %w", c.ID, err)
		}
		rows[i] = mcpServerDBRow{ID: c.ID, Position: i, Body: string(body)}
	}
	err := m.save(ctx, "", func(tx bun.Tx) error {
		if _, err := tx.NewDelete().Model((*mcpServerDBRow)(nil)).Where("1 = 1").Exec(ctx); err != nil {
			return fmt.Errorf("clear MCP servers: %w", err)
		}
		if len(rows) > 0 {
			if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
				return fmt.Errorf("insert MCP servers: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save MCP servers: %w", err)
	}
	return nil
}

// LoadedVersion implements core.VersionedStore.
func (v *versioned) LoadedVersion() int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.seen
}

// AllText returns every row of every table of the database as text, one
// line per row: for tests that check a secret appears nowhere in plain
// text.
func (d *DB) AllText(ctx context.Context) (string, error) {
	var tables []string
	q := "SELECT name FROM sqlite_master WHERE type = 'table'"
	if d.pg {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
	}
	if err := d.r.NewRaw(q).Scan(ctx, &tables); err != nil {
		return "", fmt.Errorf("list tables: %w", err)
	}
	var out []byte
	for _, t := range tables {
		rows, err := d.r.QueryContext(ctx, `SELECT * FROM "`+strings.ReplaceAll(t, `"`, `""`)+`"`)
		if err != nil {
			return "", fmt.Errorf("read table %s: %w", t, err)
		}
		cols, _ := rows.Columns()
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return "", fmt.Errorf("read table %s: %w", t, err)
			}
			out = append(out, t...)
			for _, v := range vals {
				out = append(out, '\t')
				out = append(out, v...)
			}
			out = append(out, '\n')
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return "", fmt.Errorf("read table %s: %w", t, err)
		}
	}
	return string(out), nil
}
