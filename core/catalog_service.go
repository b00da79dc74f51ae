package core

import ()

// ProviderLookup finds the provider runtime of a provider kind ("openai").
// It returns an error for a kind nobody serves. The Catalog may call it while
// holding its lock, so it must not call back into the Catalog.
type ProviderLookup interface {
	Provider(kind string) (Provider, error)
}

// CatalogChangeKind says what kind of catalog mutation happened.
type CatalogChangeKind string

// CatalogChange describes one committed catalog mutation, so that the caller
// can unbind sessions (PRV-13), rebuild provider clients and broadcast
// catalog_updated.
type CatalogChange struct {
	Kind CatalogChangeKind
	// ConnectionID is the connection the mutation was about; empty for
	// reorder and defaults changes.
	ConnectionID string
	// DeletedConnectionIDs lists connections that no longer exist. Sessions
	// bound to them must be unbound.
	DeletedConnectionIDs []string
	// RemovedModels lists (connection, model) pairs of surviving connections
	// that sessions can no longer use: the model left the connection's model
	// list, or the connection stopped being a language connection (then all
	// of its models are listed). A connection that lists no models accepts
	// any model name, so emptying a list removes nothing.
	RemovedModels []ModelRef
	// ClearedDefaults lists the default model purposes the mutation cleared,
	// explicitly or because their target went away (PRV-5).
	ClearedDefaults []ModelPurpose
}

// ConnectionInput creates or updates a connection; it mirrors the GraphQL
// ConnectionInput.
//
// On create, empty fields take defaults: Type "language", ProviderKind
// "openai", AuthKind "api_key"; a nil APIKey means no key (allowed for local
// endpoints), nil Models an empty model list, nil Order the end of the list.
//
// On update, the input is a patch: empty strings keep the stored values,
// a nil APIKey keeps the stored key and "" clears it, a nil Models keeps the
// stored models while an empty non-nil slice clears them, and a nil Order
// keeps the position. When the type changes away from video the stored
// video protocol is dropped.
//
// APIKey may be "env:NAME" to read the key from the kernel's environment at
// call time. Order is a position in the list (0 = first); values past the
// end move the connection last.
type ConnectionInput struct {
	Name          string
	Type          ConnectionType
	ProviderKind  string
	BaseURL       string
	AuthKind      AuthKind
	APIKey        *string
	Models        []Model
	Order         *int
	VideoProtocol string
	// Options replaces the provider options; nil keeps them on update.
	Options map[string]string
}
