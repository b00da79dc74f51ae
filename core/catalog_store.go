package core

import "maps"

import "context"

// CatalogData is everything the model catalog persists: the connections
// (with their API keys) and the default models.
type CatalogData struct {
	Connections []Connection
	Defaults    DefaultModels
}

// CatalogStore persists the catalog (PRV-14). Load of a store that holds
// nothing yet returns an empty CatalogData. Save replaces everything
// atomically: after a crash either the old or the new catalog is read back,
// never a mix. Implementations keep the API keys away from anything but
// their own private files.
type CatalogStore interface {
	Load(ctx context.Context) (CatalogData, error)
	Save(ctx context.Context, data CatalogData) error
}

func cloneConnection(c Connection) Connection {
	out := c
	out.Options = maps.Clone(c.Options)
	if c.Models != nil {
		out.Models = make([]Model, len(c.Models))
		for i, m := range c.Models {
			out.Models[i] = Model{ID: m.ID, Capabilities: cloneCapabilities(m.Capabilities)}
		}
	}
	return out
}

func cloneDefaults(d DefaultModels) DefaultModels {
	return DefaultModels{
		Language: clonePtr(d.Language),
		Fast:     clonePtr(d.Fast),
		Image:    clonePtr(d.Image),
		Video:    clonePtr(d.Video),
	}
}

func cloneCatalogData(d CatalogData) CatalogData {
	out := CatalogData{Defaults: cloneDefaults(d.Defaults)}
	out.Connections = make([]Connection, len(d.Connections))
	for i, c := range d.Connections {
		out.Connections[i] = cloneConnection(c)
	}
	return out
}
