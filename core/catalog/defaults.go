package catalog

import (
	"context"
	"github.com/foya-dev/foya/core"
)

// Defaults returns the default models.
func (c *Catalog) Defaults(ctx context.Context) (core.DefaultModels, error) {
	c.syncQuiet(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	return cloneDefaults(c.data.Defaults), nil
}

// SetDefaultModel sets (or, with a nil ref, clears) the default model of
// purpose. The ref must name an existing connection of the purpose's type
// (language and fast → language, image → image, video → video) and one of its
// models; a connection that lists no models accepts any model name.
func (c *Catalog) SetDefaultModel(ctx context.Context, purpose core.ModelPurpose, ref *core.ModelRef) (core.DefaultModels, error) {
	want, ok := purposeType(purpose)
	if !ok {
		return core.DefaultModels{}, core.Errorf(core.CodeBadInput, "purpose: unknown model purpose %q (known: language, fast, guardian, image, video)", purpose)
	}
	data, err := c.mutate(ctx, CatalogDefaults, "", func(d *core.CatalogData) error {
		if ref == nil {
			*defaultSlot(&d.Defaults, purpose) = nil
			return nil
		}
		conn, ok := findConnection(*d, ref.ConnectionID)
		if !ok {
			return core.Errorf(core.CodeBadInput, "connectionId: no connection with id %q", ref.ConnectionID)
		}
		if conn.Type != want {
			return core.Errorf(core.CodeBadInput, "connectionId: the %s default needs a %s connection; %q is a %s connection", purpose, want, conn.Name, conn.Type)
		}
		if !ModelUsable(conn, ref.Model) {
			return core.Errorf(core.CodeBadInput, "model: connection %q has no model %q; refresh its models or declare it", conn.Name, ref.Model)
		}
		r := *ref
		*defaultSlot(&d.Defaults, purpose) = &r
		return nil
	})
	if err != nil {
		return core.DefaultModels{}, err
	}
	return data.Defaults, nil
}

func purposeType(p core.ModelPurpose) (core.ConnectionType, bool) {
	switch p {
	case core.PurposeLanguage, core.PurposeFast, core.PurposeGuardian:
		return core.ConnLanguage, true
	case core.PurposeImage:
		return core.ConnImage, true
	case core.PurposeVideo:
		return core.ConnVideo, true
	}
	return "", false
}

var allPurposes = []core.ModelPurpose{core.PurposeLanguage, core.PurposeFast, core.PurposeImage, core.PurposeVideo, core.PurposeGuardian}

func defaultSlot(d *core.DefaultModels, p core.ModelPurpose) **core.ModelRef {
	switch p {
	case core.PurposeLanguage:
		return &d.Language
	case core.PurposeFast:
		return &d.Fast
	case core.PurposeImage:
		return &d.Image
	case core.PurposeGuardian:
		return &d.Guardian
	default:
		return &d.Video
	}
}

// pruneDefaults clears every default whose connection is gone, has the
// wrong type or no longer offers the model, and returns the purposes cleared.
func pruneDefaults(d *core.CatalogData) []core.ModelPurpose {
	var cleared []core.ModelPurpose
	for _, p := range allPurposes {
		slot := defaultSlot(&d.Defaults, p)
		ref := *slot
		if ref == nil {
			continue
		}
		want, _ := purposeType(p)
		conn, ok := findConnection(*d, ref.ConnectionID)
		if !ok || conn.Type != want || !ModelUsable(conn, ref.Model) {
			*slot = nil
			cleared = append(cleared, p)
		}
	}
	return cleared
}

// clearedDefaults lists purposes set in before and explicitly cleared in after.
func clearedDefaults(before, after core.DefaultModels) []core.ModelPurpose {
	var out []core.ModelPurpose
	for _, p := range allPurposes {
		if *defaultSlot(&before, p) != nil && *defaultSlot(&after, p) == nil {
			out = append(out, p)
		}
	}
	return out
}
