package core

import "context"

// Defaults returns the default models.
func (c *Catalog) Defaults(ctx context.Context) (DefaultModels, error) {
	c.syncQuiet(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	return cloneDefaults(c.data.Defaults), nil
}

// SetDefaultModel sets (or, with a nil ref, clears) the default model of
// purpose. The ref must name an existing connection of the purpose's type
// (language and fast → language, image → image, video → video) and one of its
// models; a connection that lists no models accepts any model name.
func (c *Catalog) SetDefaultModel(ctx context.Context, purpose ModelPurpose, ref *ModelRef) (DefaultModels, error) {
	want, ok := purposeType(purpose)
	if !ok {
		return DefaultModels{}, Errorf(CodeBadInput, "purpose: unknown model purpose %q (known: language, fast, image, video)", purpose)
	}
	data, err := c.mutate(ctx, CatalogDefaults, "", func(d *CatalogData) error {
		if ref == nil {
			*defaultSlot(&d.Defaults, purpose) = nil
			return nil
		}
		conn, ok := findConnection(*d, ref.ConnectionID)
		if !ok {
			return Errorf(CodeBadInput, "connectionId: no connection with id %q", ref.ConnectionID)
		}
		if conn.Type != want {
			return Errorf(CodeBadInput, "connectionId: the %s default needs a %s connection; %q is a %s connection", purpose, want, conn.Name, conn.Type)
		}
		if !modelUsable(conn, ref.Model) {
			return Errorf(CodeBadInput, "model: connection %q has no model %q; refresh its models or declare it", conn.Name, ref.Model)
		}
		r := *ref
		*defaultSlot(&d.Defaults, purpose) = &r
		return nil
	})
	if err != nil {
		return DefaultModels{}, err
	}
	return data.Defaults, nil
}

func purposeType(p ModelPurpose) (ConnectionType, bool) {
	switch p {
	case PurposeLanguage, PurposeFast:
		return ConnLanguage, true
	case PurposeImage:
		return ConnImage, true
	case PurposeVideo:
		return ConnVideo, true
	}
	return "", false
}

var allPurposes = []ModelPurpose{PurposeLanguage, PurposeFast, PurposeImage, PurposeVideo}

func defaultSlot(d *DefaultModels, p ModelPurpose) **ModelRef {
	switch p {
	case PurposeLanguage:
		return &d.Language
	case PurposeFast:
		return &d.Fast
	case PurposeImage:
		return &d.Image
	default:
		return &d.Video
	}
}

// pruneDefaults clears every default whose connection is gone, has the
// wrong type or no longer offers the model, and returns the purposes cleared.
func pruneDefaults(d *CatalogData) []ModelPurpose {
	var cleared []ModelPurpose
	for _, p := range allPurposes {
		slot := defaultSlot(&d.Defaults, p)
		ref := *slot
		if ref == nil {
			continue
		}
		want, _ := purposeType(p)
		conn, ok := findConnection(*d, ref.ConnectionID)
		if !ok || conn.Type != want || !modelUsable(conn, ref.Model) {
			*slot = nil
			cleared = append(cleared, p)
		}
	}
	return cleared
}

// clearedDefaults lists purposes set in before and explicitly cleared in after.
func clearedDefaults(before, after DefaultModels) []ModelPurpose {
	var out []ModelPurpose
	for _, p := range allPurposes {
		if *defaultSlot(&before, p) != nil && *defaultSlot(&after, p) == nil {
			out = append(out, p)
		}
	}
	return out
}
