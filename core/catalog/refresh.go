package catalog

import (
	"context"
	"fmt"
	"github.com/foya-dev/foya/core"
	"slices"
	"strings"
)

// RefreshModels replaces the model list of a connection with the one its
// provider reports. The provider must declare CapModelLister, else the error
// matches ErrUnavailable. Capabilities already stored for a model that still
// exists win field by field over reported ones (users declare what listing
// endpoints rarely report, PRV-4); reported values fill unknown fields.
// Models that disappeared are dropped and defaults pointing at them are
// cleared. An empty list from the provider is refused with PROVIDER_ERROR
// and the stored models are kept.
func (c *Catalog) RefreshModels(ctx context.Context, connectionID string) (core.Connection, error) {
	c.syncQuiet(ctx)
	c.mu.Lock()
	conn, ok := findConnection(c.data, connectionID)
	c.mu.Unlock()
	if !ok {
		return core.Connection{}, notFoundConnection(connectionID)
	}
	p, err := c.providers.Provider(conn.ProviderKind)
	if err != nil {
		return core.Connection{}, &core.Error{Code: core.CodeUnavailable, Message: fmt.Sprintf("provider kind %q of connection %q is not available", conn.ProviderKind, conn.Name), Err: err}
	}
	if p == nil || !slices.Contains(p.Capabilities(), core.CapModelLister) {
		return core.Connection{}, core.Errorf(core.CodeUnavailable, "provider %q cannot list models; declare the models of connection %q with updateConnection", conn.ProviderKind, conn.Name)
	}
	ep, err := endpointOf(conn, c.keyEnvs)
	if err != nil {
		return core.Connection{}, err
	}
	listed, err := p.ListModels(ctx, ep)
	if err != nil {
		return core.Connection{}, ProviderFailure(fmt.Sprintf("list models of connection %q", conn.Name), err, ep.APIKey)
	}
	models := make([]core.Model, 0, len(listed))
	seen := map[string]bool{}
	skipped := 0
	for _, m := range listed {
		id := strings.TrimSpace(m.ID)
		if id == "" || seen[id] {
			continue
		}
		if !core.ValidModelID(id) || len(models) >= core.MaxModelsPerConnection {
			skipped++
			continue
		}
		seen[id] = true
		models = append(models, core.Model{ID: id, Capabilities: cloneCapabilities(m.Capabilities)})
	}
	if skipped > 0 {
		c.log.WarnContext(ctx, "skipped listed models: ids over 256 characters or with control characters, or beyond 2000 per connection",
			"connection_id", connectionID, "skipped", skipped)
	}
	if len(models) == 0 {
		return core.Connection{}, core.Errorf(core.CodeProviderError, "provider listed no models for connection %q; the stored model list is kept", conn.Name)
	}
	route := core.RouteKey(conn, "")
	data, err := c.mutate(ctx, CatalogModelsRefreshed, connectionID, func(d *core.CatalogData) error {
		i := indexOf(*d, connectionID)
		if i < 0 {
			return notFoundConnection(connectionID)
		}
		cur := d.Connections[i]
		if core.RouteKey(cur, "") != route {
			return core.Errorf(core.CodeConflict, "connection %q changed while its models were listed; refresh again", cur.Name)
		}
		stored := map[string]core.Capabilities{}
		for _, m := range cur.Models {
			stored[m.ID] = m.Capabilities
		}
		merged := make([]core.Model, len(models))
		for j, m := range models {
			merged[j] = m
			if caps, ok := stored[m.ID]; ok {
				merged[j].Capabilities = MergeCapabilities(caps, m.Capabilities)
			}
		}
		cur.Models = merged
		if err := validateConnection(cur, c.providers, c.keyEnvs); err != nil {
			return &core.Error{Code: core.CodeProviderError, Message: fmt.Sprintf("provider listed models that fail validation: %s", core.ErrorMessage(err)), Err: err}
		}
		d.Connections[i] = cur
		return nil
	})
	if err != nil {
		return core.Connection{}, err
	}
	refreshed, _ := findConnection(data, connectionID)
	return refreshed, nil
}
