package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
)

// models binds a session to the model its next step uses: connection,
// model, endpoint and provider, with the capabilities its provider
// resolves (cached per route), and finds the title and web search models.
type models struct {
	catalog   *catalog.Catalog
	providers core.ProviderLookup
	log       *slog.Logger
	// resolved caches what provider capability resolvers reported, by route.
	resolved memo[resolvedCaps]
}

// boundModel is what a session's next model step uses.
type boundModel struct {
	conn     core.Connection
	model    core.Model
	endpoint core.Endpoint
	provider core.Provider
	route    string
	// imageDefault: an IMAGE default model exists (image_generation is offered).
	imageDefault bool
	// videoDefault: a VIDEO default model exists (video_generation is offered).
	videoDefault bool
	// searchFallback: a fallback search connection is configured.
	searchFallback bool
	// terminals: background terminals are available (terminal_* offered).
	terminals bool
	// project is the session's project when bound by resolve (the
	// attribute of the token and cost metrics).
	project string
}

// resolve finds the session's connection, model, endpoint and provider,
// or explains with UNAVAILABLE why the session cannot call a model now.
func (m *models) resolve(ctx context.Context, s core.Session) (boundModel, error) {
	if s.ConnectionID == "" || s.Model == "" {
		return boundModel{}, core.Errorf(core.CodeUnavailable, "session %s has no language model; choose a connection and model with updateSession", s.ID)
	}
	conn, err := m.catalog.Connection(ctx, s.ConnectionID)
	if errors.Is(err, core.ErrNotFound) {
		return boundModel{}, core.Errorf(core.CodeUnavailable, "the connection of session %s no longer exists; choose another with updateSession", s.ID)
	}
	if err != nil {
		return boundModel{}, err
	}
	if conn.Type != core.ConnLanguage {
		return boundModel{}, core.Errorf(core.CodeUnavailable, "connection %q is not a language connection; choose another with updateSession", conn.Name)
	}
	b := boundModel{conn: conn, model: core.Model{ID: s.Model}, route: core.RouteKey(conn, s.Model), project: s.ProjectID}
	found := len(conn.Models) == 0
	for _, cm := range conn.Models {
		if cm.ID == s.Model {
			b.model, found = cm, true
		}
	}
	if !found {
		return boundModel{}, core.Errorf(core.CodeUnavailable, "connection %q no longer offers model %q; choose another with updateSession", conn.Name, s.Model)
	}
	if b.endpoint, err = m.catalog.Endpoint(ctx, conn.ID); err != nil {
		return boundModel{}, err
	}
	p, err := m.providers.Provider(conn.ProviderKind)
	if err != nil {
		return boundModel{}, &core.Error{Code: core.CodeUnavailable, Message: fmt.Sprintf("provider %q of connection %q is not available", conn.ProviderKind, conn.Name), Err: err}
	}
	b.provider = p
	m.withResolvedCapabilities(ctx, &b)
	return b, nil
}

// completeDetailed is one non-streamed completion on b: with finish reason
// and usage where the provider reports them (DetailedCompleter), else a
// plain completion. can is false when b's provider cannot complete at all.
func (b boundModel) completeDetailed(ctx context.Context, req core.ProviderRequest) (c core.Completion, can bool, err error) {
	if dc, ok := b.provider.(core.DetailedCompleter); ok && core.HasCapability(b.provider, core.CapDetailedCompleter) {
		c, err = dc.CompleteDetailed(ctx, b.endpoint, req)
		return c, true, err
	}
	if core.HasCapability(b.provider, core.CapCompleter) {
		c, err = b.provider.Complete(ctx, b.endpoint, req)
		return c, true, err
	}
	return c, false, nil
}
