// Package session owns sessions and projects: the session service (create,
// update, delete, commit and append events under the session lock, cluster
// ownership and fencing), subscriptions with catch-up, the history cache,
// message paging, forks, and the provider view that turns a history into the
// messages a provider is sent.
//
// It imports only the standard library, core, core/catalog and core/pubsub.
package session
