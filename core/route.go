package core

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
)

// RouteKey returns the route of a model served by conn (PRV-10): a stable
// isolation key derived from the connection id, connection type, provider
// kind, auth kind, base URL (surrounding spaces and trailing slashes
// trimmed) and model name. The API key and the display name are not part of
// it, so rotating a key or renaming a connection keeps the route, while a
// different endpoint serving the same model name gets a different route.
//
// The key is "rt_" followed by the first 32 hex digits of a SHA-256 over a
// versioned, length-prefixed encoding of those fields.
//
// Per-route state that is persisted later (accepted compaction boundaries,
// provider-native context state) must be keyed by RouteKey and checked
// against it, so that it is never reused for a different endpoint serving a
// model of the same name.
func RouteKey(conn Connection, model string) string {
	h := sha256.New()
	for _, f := range []string{
		"route.v1",
		conn.ID,
		string(conn.Type),
		conn.ProviderKind,
		string(conn.AuthKind),
		normalizeBaseURL(conn.BaseURL),
		model,
	} {
		fmt.Fprintf(h, "%d:%s;", len(f), f)
	}
	return "rt_" + hex.EncodeToString(h.Sum(nil))[:32]
}

func normalizeBaseURL(u string) string {
	return strings.TrimRight(strings.TrimSpace(u), "/")
}

// RouteState is the in-memory budget state of one route (PRV-10): the token
// counts of the last real request and the payload baseline the next context
// estimate starts from. Zero values mean "not measured yet".
type RouteState struct {
	LastInputTokens       int64
	LastOutputTokens      int64
	PayloadBaselineTokens int64
}

// RouteStates holds RouteState per route key. It is safe for concurrent use.
// The Catalog clears it on every catalog change, because a change may
// rebuild provider clients and invalidate measured baselines.
type RouteStates struct {
	mu     sync.Mutex
	states map[string]RouteState
}

// NewRouteStates returns an empty set of route states.
func NewRouteStates() *RouteStates {
	return &RouteStates{states: map[string]RouteState{}}
}

// Get returns the state of route key and whether one is recorded.
func (r *RouteStates) Get(key string) (RouteState, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.states[key]
	return s, ok
}

// Set records the state of route key.
func (r *RouteStates) Set(key string, s RouteState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.states == nil {
		r.states = map[string]RouteState{}
	}
	r.states[key] = s
}

// ClearAll forgets every route's state.
func (r *RouteStates) ClearAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.states)
}

// Len returns the number of routes with recorded state.
func (r *RouteStates) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.states)
}
