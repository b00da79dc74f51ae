package engine

import "sync"

// memo is a small string-keyed map with its own lock, for the engine's
// caches and once-only marks (titles asked, hook warnings reported, failed
// compactions, resolved capabilities).
type memo[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

func (m *memo[V]) get(key string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[key]
	return v, ok
}

func (m *memo[V]) set(key string, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]V{}
	}
	m.m[key] = v
}

// swap sets key to v and returns what it held before.
func (m *memo[V]) swap(key string, v V) (old V, had bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]V{}
	}
	old, had = m.m[key]
	m.m[key] = v
	return old, had
}

func (m *memo[V]) delete(keys ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		delete(m.m, k)
	}
}
