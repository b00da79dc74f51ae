package catalog

import (
	"context"
	"errors"
	"fmt"
	"github.com/foya-dev/foya/core"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Catalog change kinds.
const (
	CatalogCreated         core.CatalogChangeKind = "created"
	CatalogUpdated         core.CatalogChangeKind = "updated"
	CatalogDeleted         core.CatalogChangeKind = "deleted"
	CatalogReordered       core.CatalogChangeKind = "reordered"
	CatalogDefaults        core.CatalogChangeKind = "defaults"
	CatalogModelsRefreshed core.CatalogChangeKind = "models_refreshed"
)

// Config holds the dependencies of a Catalog.
type Config struct {
	// Store persists the catalog; required.
	Store core.CatalogStore
	// Providers validates provider kinds and serves model listing; required.
	Providers core.ProviderLookup
	// Logger defaults to a logger that discards everything.
	Logger *slog.Logger
	// AllowKeyEnv names environment variables that env: API key references
	// may read besides those matching ^[A-Z][A-Z0-9_]*_API_KEY$.
	AllowKeyEnv []string
}

// Defaults for empty ConnectionInput fields on create.
const (
	DefaultProviderKind                       = "openai"
	DefaultAuthKind       core.AuthKind       = core.AuthAPIKey
	DefaultConnectionType core.ConnectionType = core.ConnLanguage
)

// Catalog is the model catalog service: connections, their models and
// capabilities, default models, and the in-memory route states (PRV-1..5,
// PRV-10, PRV-13, PRV-14). It is safe for concurrent use. Every mutation
// validates, saves through the store, clears the route states and then
// reports a CatalogChange; a mutation that fails changes nothing.
type Catalog struct {
	store     core.CatalogStore
	providers core.ProviderLookup
	keyEnvs   keyEnvPolicy
	log       *slog.Logger
	// watchers are called after every committed mutation (see Watch);
	// guarded by watchMu.
	watchMu  sync.Mutex
	watchers []func(context.Context, core.CatalogChange)
	routes   *core.RouteStates

	mu   sync.Mutex
	data core.CatalogData // connections sorted by Order, orders 0..n-1
}

// New loads the catalog from cfg.Store. Defaults that point at a
// missing connection or model are dropped in memory (and logged); the file
// is rewritten only by the next mutation. Connections that fail today's
// validation are kept and logged, so that no user data is lost; they must be
// fixed before they can be updated.
func New(ctx context.Context, cfg Config) (*Catalog, error) {
	if cfg.Store == nil {
		return nil, errors.New("new catalog: store is required")
	}
	if cfg.Providers == nil {
		return nil, errors.New("new catalog: provider lookup is required")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	data, err := cfg.Store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	seen := map[string]bool{}
	for _, conn := range data.Connections {
		if conn.ID == "" {
			return nil, fmt.Errorf("load catalog: a connection has no id")
		}
		if seen[conn.ID] {
			return nil, fmt.Errorf("load catalog: duplicate connection id %q", conn.ID)
		}
		seen[conn.ID] = true
		if err := validateConnection(conn, cfg.Providers, newKeyEnvPolicy(cfg.AllowKeyEnv)); err != nil {
			logger.WarnContext(ctx, "stored connection is invalid", "connection_id", conn.ID, "err", core.ErrorMessage(err))
		}
	}
	return &Catalog{
		store:     cfg.Store,
		providers: cfg.Providers,
		keyEnvs:   newKeyEnvPolicy(cfg.AllowKeyEnv),
		log:       logger,
		routes:    core.NewRouteStates(),
		data:      normalizeLoaded(ctx, data, logger),
	}, nil
}

// normalizeLoaded sorts loaded connections by order, renumbers them and
// drops defaults whose target is gone (in memory; the store is rewritten by
// the next mutation).
func normalizeLoaded(ctx context.Context, data core.CatalogData, logger *slog.Logger) core.CatalogData {
	data = cloneCatalogData(data)
	sort.SliceStable(data.Connections, func(i, j int) bool { return data.Connections[i].Order < data.Connections[j].Order })
	normalizeOrder(&data)
	for _, p := range pruneDefaults(&data) {
		logger.WarnContext(ctx, "dropped default model whose target is gone", "purpose", string(p))
	}
	pruneFallbacks(&data)
	return data
}

// Routes returns the in-memory route states; the Catalog clears them on
// every change.
func (c *Catalog) Routes() *core.RouteStates { return c.routes }

// Connections returns every connection sorted by display order.
func (c *Catalog) Connections(ctx context.Context) ([]core.Connection, error) {
	c.syncQuiet(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	return cloneCatalogData(c.data).Connections, nil
}

// Connection returns one connection, or an error matching ErrNotFound.
func (c *Catalog) Connection(ctx context.Context, id string) (core.Connection, error) {
	c.syncQuiet(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	conn, ok := findConnection(c.data, id)
	if !ok {
		return core.Connection{}, notFoundConnection(id)
	}
	return cloneConnection(conn), nil
}

// CreateConnection validates and stores a new connection (see
// ConnectionInput for defaults) and returns it.
func (c *Catalog) CreateConnection(ctx context.Context, in core.ConnectionInput) (core.Connection, error) {
	conn := applyInput(core.Connection{ID: core.NewID("conn")}, in, true)
	if err := validateConnection(conn, c.providers, c.keyEnvs); err != nil {
		return core.Connection{}, err
	}
	data, err := c.mutate(ctx, CatalogCreated, conn.ID, func(d *core.CatalogData) error {
		if err := nameTaken(*d, conn.Name, conn.ID); err != nil {
			return err
		}
		pos := len(d.Connections)
		if in.Order != nil {
			pos = *in.Order
		}
		d.Connections = insertAt(d.Connections, conn, pos)
		return nil
	})
	if err != nil {
		return core.Connection{}, err
	}
	created, _ := findConnection(data, conn.ID)
	return created, nil
}

// UpdateConnection applies in to connection id as a patch (see
// ConnectionInput) and returns the result. Defaults and sessions that point
// at models the update removed are reported in the CatalogChange.
func (c *Catalog) UpdateConnection(ctx context.Context, id string, in core.ConnectionInput) (core.Connection, error) {
	data, err := c.mutate(ctx, CatalogUpdated, id, func(d *core.CatalogData) error {
		i := indexOf(*d, id)
		if i < 0 {
			return notFoundConnection(id)
		}
		conn := applyInput(d.Connections[i], in, false)
		if err := validateConnection(conn, c.providers, c.keyEnvs); err != nil {
			return err
		}
		if err := keyBindingError(d.Connections[i], conn, in); err != nil {
			return err
		}
		if in.Name != "" {
			if err := nameTaken(*d, conn.Name, id); err != nil {
				return err
			}
		}
		d.Connections[i] = conn
		if in.Order != nil {
			rest := slices.Delete(slices.Clone(d.Connections), i, i+1)
			d.Connections = insertAt(rest, conn, *in.Order)
		}
		return nil
	})
	if err != nil {
		return core.Connection{}, err
	}
	updated, _ := findConnection(data, id)
	return updated, nil
}

// nameTaken is a CONFLICT when a connection other than id is already named
// name (case-insensitively, ignoring surrounding spaces): clients and the CLI
// refer to connections by name.
func nameTaken(d core.CatalogData, name, id string) error {
	want := strings.TrimSpace(name)
	for _, other := range d.Connections {
		if other.ID != id && strings.EqualFold(strings.TrimSpace(other.Name), want) {
			return core.Errorf(core.CodeConflict, "name: a connection named %q already exists (%s); choose another name or update that connection", other.Name, other.ID)
		}
	}
	return nil
}

// DeleteConnection removes connection id and clears the defaults that
// pointed at it. Sessions bound to it must be unbound by the OnChange
// callback (PRV-13).
func (c *Catalog) DeleteConnection(ctx context.Context, id string) error {
	_, err := c.mutate(ctx, CatalogDeleted, id, func(d *core.CatalogData) error {
		i := indexOf(*d, id)
		if i < 0 {
			return notFoundConnection(id)
		}
		d.Connections = slices.Delete(d.Connections, i, i+1)
		return nil
	})
	return err
}

// ReorderConnections sets the display order; ids must list every connection
// exactly once. It returns the connections in their new order.
func (c *Catalog) ReorderConnections(ctx context.Context, ids []string) ([]core.Connection, error) {
	data, err := c.mutate(ctx, CatalogReordered, "", func(d *core.CatalogData) error {
		if len(ids) != len(d.Connections) {
			return core.Errorf(core.CodeBadInput, "ids: must list every connection exactly once (got %d ids for %d connections)", len(ids), len(d.Connections))
		}
		byID := map[string]core.Connection{}
		for _, conn := range d.Connections {
			byID[conn.ID] = conn
		}
		next := make([]core.Connection, 0, len(ids))
		for i, id := range ids {
			conn, ok := byID[id]
			if !ok {
				return core.Errorf(core.CodeBadInput, "ids[%d]: unknown or repeated connection id %q", i, id)
			}
			delete(byID, id)
			next = append(next, conn)
		}
		d.Connections = next
		return nil
	})
	if err != nil {
		return nil, err
	}
	return data.Connections, nil
}

// mutate runs fn on a copy of the catalog, normalises order, prunes
// defaults, saves, commits and reports the change. fn's error aborts
// everything.
func (c *Catalog) mutate(ctx context.Context, kind core.CatalogChangeKind, connID string, fn func(d *core.CatalogData) error) (core.CatalogData, error) {
	c.syncQuiet(ctx)
	c.mu.Lock()
	for attempt := 0; ; attempt++ {
		out, change, saveFailed, err := c.mutateLocked(ctx, kind, connID, fn)
		if err != nil && core.IsStale(err) && attempt == 0 {
			// Another kernel saved first: apply the change to its catalog.
			verr := c.reloadLocked(ctx)
			if verr == nil {
				continue
			}
			err = errors.Join(err, verr)
		}
		c.mu.Unlock()
		if err != nil {
			if saveFailed {
				c.log.ErrorContext(ctx, "save catalog", "change", string(kind), "connection_id", connID, "err", err)
			}
			return core.CatalogData{}, err
		}
		c.log.InfoContext(ctx, "catalog changed", "change", string(kind), "connection_id", connID,
			"deleted", len(change.DeletedConnectionIDs), "removed_models", len(change.RemovedModels),
			"cleared_defaults", len(change.ClearedDefaults))
		c.watchMu.Lock()
		ws := c.watchers
		c.watchMu.Unlock()
		for _, fn := range ws {
			fn(ctx, change)
		}
		return out, nil
	}
}

// mutateLocked is one attempt of mutate; c.mu is held. An error of fn is
// returned as is; a failed save is wrapped.
func (c *Catalog) mutateLocked(ctx context.Context, kind core.CatalogChangeKind, connID string, fn func(d *core.CatalogData) error) (_ core.CatalogData, _ core.CatalogChange, saveFailed bool, _ error) {
	next := cloneCatalogData(c.data)
	if err := fn(&next); err != nil {
		return core.CatalogData{}, core.CatalogChange{}, false, err
	}
	normalizeOrder(&next)
	change := core.CatalogChange{Kind: kind, ConnectionID: connID}
	change.ClearedDefaults = clearedDefaults(c.data.Defaults, next.Defaults)
	change.ClearedDefaults = append(change.ClearedDefaults, pruneDefaults(&next)...)
	pruneFallbacks(&next)
	change.DeletedConnectionIDs, change.RemovedModels = diffConnections(c.data, next)
	if err := c.store.Save(ctx, cloneCatalogData(next)); err != nil {
		return core.CatalogData{}, core.CatalogChange{}, true, fmt.Errorf("save catalog: %w", err)
	}
	c.data = next
	c.routes.ClearAll()
	return cloneCatalogData(next), change, false, nil
}

func applyInput(base core.Connection, in core.ConnectionInput, create bool) core.Connection {
	c := cloneConnection(base)
	set := func(dst *string, v, def string) {
		v = strings.TrimSpace(v)
		switch {
		case v != "":
			*dst = v
		case create:
			*dst = def
		}
	}
	set(&c.Name, in.Name, "")
	typ, auth := string(c.Type), string(c.AuthKind)
	set(&typ, string(in.Type), string(DefaultConnectionType))
	set(&auth, string(in.AuthKind), string(DefaultAuthKind))
	c.Type, c.AuthKind = core.ConnectionType(typ), core.AuthKind(auth)
	set(&c.ProviderKind, in.ProviderKind, DefaultProviderKind)
	set(&c.BaseURL, in.BaseURL, "")
	set(&c.VideoProtocol, in.VideoProtocol, "")
	if c.Type != core.ConnVideo && strings.TrimSpace(in.VideoProtocol) == "" {
		c.VideoProtocol = ""
	}
	if in.APIKey != nil {
		c.APIKey = strings.TrimSpace(*in.APIKey)
	}
	if in.Models != nil {
		c.Models = make([]core.Model, len(in.Models))
		for i, m := range in.Models {
			c.Models[i] = core.Model{ID: strings.TrimSpace(m.ID), Capabilities: cloneCapabilities(m.Capabilities)}
		}
	}
	if c.Models == nil {
		c.Models = []core.Model{}
	}
	if in.Options != nil {
		c.Options = maps.Clone(in.Options)
		if len(c.Options) == 0 {
			c.Options = nil
		}
	}
	if in.Order != nil && *in.Order < 0 {
		c.Order = *in.Order // rejected by validation
	}
	return c
}

func notFoundConnection(id string) error {
	return core.Errorf(core.CodeNotFound, "connection %q not found", id)
}

func findConnection(d core.CatalogData, id string) (core.Connection, bool) {
	if i := indexOf(d, id); i >= 0 {
		return d.Connections[i], true
	}
	return core.Connection{}, false
}

func indexOf(d core.CatalogData, id string) int {
	return slices.IndexFunc(d.Connections, func(c core.Connection) bool { return c.ID == id })
}

func insertAt(list []core.Connection, c core.Connection, pos int) []core.Connection {
	pos = max(0, min(pos, len(list)))
	return slices.Insert(list, pos, c)
}

// normalizeOrder renumbers connections 0..n-1 in slice order; mutations set
// the slice order, and loading sorts by the stored Order first.
func normalizeOrder(d *core.CatalogData) {
	for i := range d.Connections {
		d.Connections[i].Order = i
	}
}

// diffConnections reports deleted connections and (connection, model) pairs
// sessions can no longer use (see CatalogChange).
func diffConnections(before, after core.CatalogData) (deleted []string, removed []core.ModelRef) {
	for _, old := range before.Connections {
		cur, ok := findConnection(after, old.ID)
		if !ok {
			deleted = append(deleted, old.ID)
			continue
		}
		for _, m := range old.Models {
			if (old.Type == core.ConnLanguage && cur.Type != core.ConnLanguage) || !ModelUsable(cur, m.ID) {
				removed = append(removed, core.ModelRef{ConnectionID: old.ID, Model: m.ID})
			}
		}
	}
	sort.Strings(deleted)
	return deleted, removed
}

// Watch registers fn to be called after every committed mutation, outside
// the Catalog's lock (fn may call back into the Catalog), in registration
// order; calls of concurrent mutations may arrive in any order. A service
// built on the catalog registers itself in its constructor (the session
// service unbinds sessions from removed models), so nothing is wired late.
func (c *Catalog) Watch(fn func(ctx context.Context, change core.CatalogChange)) {
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	c.watchers = append(slices.Clip(c.watchers), fn)
}
