package catalog

import (
	"context"
	"github.com/foya-dev/foya/core"
	"slices"
	"strings"
)

// ResolveSessionModel picks the connection and model of a new session
// (PRV-1, SES-8), in this order of precedence:
//
//  1. connectionID given: it must be a language connection. With a model, the
//     model must be listed (a connection that lists no models accepts any
//     non-empty name, since the user may not have declared them). Without a
//     model: the language default's model when the default is on this
//     connection, else the connection's first model.
//  2. only model given: the language default when it names that model, else
//     the first language connection by order that lists it.
//  3. nothing given: the language default, else the first language
//     connection by order that lists a model, and its first model.
//
// With no language connection at all the error matches ErrUnavailable.
func (c *Catalog) ResolveSessionModel(ctx context.Context, connectionID, model string) (core.ModelRef, error) {
	c.syncQuiet(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	model = strings.TrimSpace(model)
	def := c.data.Defaults.Language
	if connectionID != "" {
		conn, ok := findConnection(c.data, connectionID)
		if !ok {
			return core.ModelRef{}, core.Errorf(core.CodeBadInput, "connectionId: no connection with id %q", connectionID)
		}
		if conn.Type != core.ConnLanguage {
			return core.ModelRef{}, core.Errorf(core.CodeBadInput, "connectionId: %q is a %s connection; sessions need a language connection", conn.Name, conn.Type)
		}
		switch {
		case model != "":
			if !ModelUsable(conn, model) {
				return core.ModelRef{}, core.Errorf(core.CodeBadInput, "model: connection %q has no model %q", conn.Name, model)
			}
			return core.ModelRef{ConnectionID: conn.ID, Model: model}, nil
		case def != nil && def.ConnectionID == conn.ID:
			return *def, nil
		case len(conn.Models) > 0:
			return core.ModelRef{ConnectionID: conn.ID, Model: conn.Models[0].ID}, nil
		default:
			return core.ModelRef{}, core.Errorf(core.CodeBadInput, "model: connection %q lists no models; name a model or refresh its models", conn.Name)
		}
	}
	if model != "" {
		if def != nil && def.Model == model {
			return *def, nil
		}
		for _, conn := range c.data.Connections {
			if conn.Type == core.ConnLanguage && slices.ContainsFunc(conn.Models, func(m core.Model) bool { return m.ID == model }) {
				return core.ModelRef{ConnectionID: conn.ID, Model: model}, nil
			}
		}
		return core.ModelRef{}, core.Errorf(core.CodeBadInput, "model: no language connection lists model %q; name the connection too", model)
	}
	if def != nil {
		return *def, nil
	}
	anyLanguage := false
	for _, conn := range c.data.Connections {
		if conn.Type != core.ConnLanguage {
			continue
		}
		anyLanguage = true
		if len(conn.Models) > 0 {
			return core.ModelRef{ConnectionID: conn.ID, Model: conn.Models[0].ID}, nil
		}
	}
	if anyLanguage {
		return core.ModelRef{}, core.Errorf(core.CodeUnavailable, "no language connection lists a model; refresh or declare models, or set a default language model")
	}
	return core.ModelRef{}, core.Errorf(core.CodeUnavailable, "no language connection configured; create one with createConnection")
}

// ModelUsable reports whether sessions and defaults may use model on conn.
// A connection that lists no models accepts any non-empty name.
func ModelUsable(conn core.Connection, model string) bool {
	if model == "" {
		return false
	}
	if len(conn.Models) == 0 {
		return true
	}
	return slices.ContainsFunc(conn.Models, func(m core.Model) bool { return m.ID == model })
}

// ReasoningEfforts lists the efforts a connection's model declares; nil when
// unknown (any effort is then accepted).
func (c *Catalog) ReasoningEfforts(connectionID, model string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	conn, ok := findConnection(c.data, connectionID)
	if !ok {
		return nil
	}
	for _, m := range conn.Models {
		if m.ID == model {
			return slices.Clone(m.Capabilities.ReasoningEfforts)
		}
	}
	return nil
}
