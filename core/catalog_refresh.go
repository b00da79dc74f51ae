package core

import (
	"context"
	"fmt"
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
func (c *Catalog) RefreshModels(ctx context.Context, connectionID string) (Connection, error) {
	c.syncQuiet(ctx)
	c.mu.Lock()
	conn, ok := findConnection(c.data, connectionID)
	c.mu.Unlock()
	if !ok {
		return Connection{}, notFoundConnection(connectionID)
	}
	p, err := c.providers.Provider(conn.ProviderKind)
	if err != nil {
		return Connection{}, &Error{Code: CodeUnavailable, Message: fmt.Sprintf("provider kind %q of connection %q is not available", conn.ProviderKind, conn.Name), Err: err}
	}
	if p == nil || !slices.Contains(p.Capabilities(), CapModelLister) {
		return Connection{}, Errorf(CodeUnavailable, "provider %q cannot list models; declare the models of connection %q with updateConnection", conn.ProviderKind, conn.Name)
	}
	ep, err := endpointOf(conn, c.keyEnvs)
	if err != nil {
		return Connection{}, err
	}
	listed, err := p.ListModels(ctx, ep)
	if err != nil {
		return Connection{}, providerFailure(fmt.Sprintf("list models of connection %q", conn.Name), err, ep.APIKey)
	}
	models := make([]Model, 0, len(listed))
	seen := map[string]bool{}
	skipped := 0
	for _, m := range listed {
		id := strings.TrimSpace(m.ID)
		if id == "" || seen[id] {
			continue
		}
		if !validModelID(id) || len(models) >= MaxModelsPerConnection {
			skipped++
			continue
		}
		seen[id] = true
		models = append(models, Model{ID: id, Capabilities: cloneCapabilities(m.Capabilities)})
	}
	if skipped > 0 {
		c.log.WarnContext(ctx, "skipped listed models: ids over 256 characters or with control characters, or beyond 2000 per connection",
			"connection_id", connectionID, "skipped", skipped)
	}
	if len(models) == 0 {
		return Connection{}, Errorf(CodeProviderError, "provider listed no models for connection %q; the stored model list is kept", conn.Name)
	}
	route := RouteKey(conn, "")
	data, err := c.mutate(ctx, CatalogModelsRefreshed, connectionID, func(d *CatalogData) error {
		i := indexOf(*d, connectionID)
		if i < 0 {
			return notFoundConnection(connectionID)
		}
		cur := d.Connections[i]
		if RouteKey(cur, "") != route {
			return Errorf(CodeConflict, "connection %q changed while its models were listed; refresh again", cur.Name)
		}
		stored := map[string]Capabilities{}
		for _, m := range cur.Models {
			stored[m.ID] = m.Capabilities
		}
		merged := make([]Model, len(models))
		for j, m := range models {
			merged[j] = m
			if caps, ok := stored[m.ID]; ok {
				merged[j].Capabilities = mergeCapabilities(caps, m.Capabilities)
			}
		}
		cur.Models = merged
		if err := validateConnection(cur, c.providers, c.keyEnvs); err != nil {
			return &Error{Code: CodeProviderError, Message: fmt.Sprintf("provider listed models that fail validation: %s", ErrorMessage(err)), Err: err}
		}
		d.Connections[i] = cur
		return nil
	})
	if err != nil {
		return Connection{}, err
	}
	refreshed, _ := findConnection(data, connectionID)
	return refreshed, nil
}
