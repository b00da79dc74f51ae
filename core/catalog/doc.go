// Package catalog owns the model catalog: connections and their models,
// capabilities (stored and provider-reported), default models, routes and
// their per-route state, prices, API-key binding and env: key policy,
// endpoint resolution, validation and redaction, model-list refresh, and the
// sync of a catalog store shared by several kernels.
//
// It imports only the standard library and core.
package catalog
