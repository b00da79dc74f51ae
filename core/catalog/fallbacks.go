package catalog

import (
	"context"

	"github.com/foya-dev/foya/core"
)

// MaxFallbackModels bounds a fallback chain (per purpose or per session).
const MaxFallbackModels = 8

// SetFallbackModels replaces the fallback chain of purpose: the models a
// call of that purpose continues on, in order, when its model fails with a
// class retries cannot fix (docs/fallback.md). Every entry must name a
// connection of the purpose's type and one of its models, at most once; an
// empty list clears the chain.
func (c *Catalog) SetFallbackModels(ctx context.Context, purpose core.ModelPurpose, refs []core.ModelRef) (core.DefaultModels, error) {
	want, ok := purposeType(purpose)
	if !ok {
		return core.DefaultModels{}, core.Errorf(core.CodeBadInput, "purpose: unknown model purpose %q (known: language, fast, image, video, guardian)", purpose)
	}
	if len(refs) > MaxFallbackModels {
		return core.DefaultModels{}, core.Errorf(core.CodeBadInput, "models: at most %d fallback models per purpose (got %d)", MaxFallbackModels, len(refs))
	}
	data, err := c.mutate(ctx, CatalogDefaults, "", func(d *core.CatalogData) error {
		seen := map[core.ModelRef]bool{}
		for i, ref := range refs {
			conn, ok := findConnection(*d, ref.ConnectionID)
			if !ok {
				return core.Errorf(core.CodeBadInput, "models[%d].connectionId: no connection with id %q", i, ref.ConnectionID)
			}
			if conn.Type != want {
				return core.Errorf(core.CodeBadInput, "models[%d].connectionId: the %s fallback chain needs %s connections; %q is a %s connection", i, purpose, want, conn.Name, conn.Type)
			}
			if ref.Model == "" || !ModelUsable(conn, ref.Model) {
				return core.Errorf(core.CodeBadInput, "models[%d].model: connection %q has no model %q; refresh its models or declare it", i, conn.Name, ref.Model)
			}
			if seen[ref] {
				return core.Errorf(core.CodeBadInput, "models[%d]: %q of connection %q is already in the chain", i, ref.Model, conn.Name)
			}
			seen[ref] = true
		}
		if len(refs) == 0 {
			delete(d.Defaults.Fallbacks, purpose)
			return nil
		}
		if d.Defaults.Fallbacks == nil {
			d.Defaults.Fallbacks = map[core.ModelPurpose][]core.ModelRef{}
		}
		d.Defaults.Fallbacks[purpose] = append([]core.ModelRef(nil), refs...)
		return nil
	})
	if err != nil {
		return core.DefaultModels{}, err
	}
	return data.Defaults, nil
}

// FallbackModels is the fallback chain of purpose (nil: none).
func (c *Catalog) FallbackModels(ctx context.Context, purpose core.ModelPurpose) []core.ModelRef {
	d, _ := c.Defaults(ctx)
	return d.Fallbacks[purpose]
}

// pruneFallbacks drops every fallback entry whose connection is gone, has
// the wrong type or no longer offers the model.
func pruneFallbacks(d *core.CatalogData) {
	for p, refs := range d.Defaults.Fallbacks {
		want, _ := purposeType(p)
		var kept []core.ModelRef
		for _, ref := range refs {
			if conn, ok := findConnection(*d, ref.ConnectionID); ok && conn.Type == want && ModelUsable(conn, ref.Model) {
				kept = append(kept, ref)
			}
		}
		if len(kept) == 0 {
			delete(d.Defaults.Fallbacks, p)
		} else {
			d.Defaults.Fallbacks[p] = kept
		}
	}
}
