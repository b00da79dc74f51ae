package core

import (
	"context"
)

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
