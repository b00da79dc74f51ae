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

// MaxRouteStates bounds the route states a RouteStates keeps.
const MaxRouteStates = 1024

// RouteStates holds RouteState per route key. It is safe for concurrent use.
// The Catalog clears it on every catalog change, because a change may
// rebuild provider clients and invalidate measured baselines.
//
// It is a cache of what the engine also persists (the accepted boundary,
// RouteAnchor), keyed by route and session: it holds at most
// MaxRouteStates, and a new key beyond them drops one arbitrary other, so
// that a kernel that runs for months does not keep a state for every
// session it ever ran (BenchmarkLongRun found 170 bytes a session kept for
// good, deleted sessions included). A dropped session's next estimate
// reads its persisted anchor instead.
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
	if _, ok := r.states[key]; !ok && len(r.states) >= MaxRouteStates {
		for k := range r.states { // (an arbitrary key: map order is random)
			delete(r.states, k)
			break
		}
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
