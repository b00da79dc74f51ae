package core

import (
	"log/slog"
	"sync"
)

// subscriberBuffer is how many events a subscriber may have pending before
// the broker starts dropping: live-only events are simply lost (they are
// lossy by design), persisted ones are re-read from the store.
const subscriberBuffer = 2048

// Broker fans session and kernel events out to subscribers. It never blocks
// a publisher: a slow subscriber loses deltas, and for persisted events it is
// flagged as lagging and catches up from the store (see Service.Subscribe).
type Broker struct {
	log *slog.Logger

	mu       sync.RWMutex
	sessions map[string]map[*Subscription]struct{}
	kernel   map[*KernelSubscription]struct{}
}

// NewBroker returns an empty broker.
func NewBroker(log *slog.Logger) *Broker {
	if log == nil {
		log = slog.Default()
	}
	return &Broker{log: log, sessions: map[string]map[*Subscription]struct{}{}, kernel: map[*KernelSubscription]struct{}{}}
}

// Subscription receives the events of one session.
type Subscription struct {
	C chan Event
	// Lagged is signalled when a persisted event could not be buffered.
	Lagged chan struct{}

	b         *Broker
	sessionID string
	once      sync.Once
}

// Close unregisters the subscription.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.b.mu.Lock()
		defer s.b.mu.Unlock()
		if subs := s.b.sessions[s.sessionID]; subs != nil {
			delete(subs, s)
			if len(subs) == 0 {
				delete(s.b.sessions, s.sessionID)
			}
		}
	})
}

// SubscribeSession registers a subscriber to one session's events.
func (b *Broker) SubscribeSession(sessionID string) *Subscription {
	s := &Subscription{C: make(chan Event, subscriberBuffer), Lagged: make(chan struct{}, 1), b: b, sessionID: sessionID}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sessions[sessionID] == nil {
		b.sessions[sessionID] = map[*Subscription]struct{}{}
	}
	b.sessions[sessionID][s] = struct{}{}
	return s
}

// Publish delivers ev to the session's subscribers without blocking.
func (b *Broker) Publish(ev Event) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for s := range b.sessions[ev.SessionID] {
		select {
		case s.C <- ev:
		default:
			if ev.Seq > 0 || ev.Type == EventSessionDeleted {
				select {
				case s.Lagged <- struct{}{}:
				default:
				}
			}
		}
	}
}

// KernelSubscription receives kernel-wide events.
type KernelSubscription struct {
	C    chan KernelEvent
	b    *Broker
	once sync.Once
}

// Close unregisters the subscription.
func (s *KernelSubscription) Close() {
	s.once.Do(func() {
		s.b.mu.Lock()
		defer s.b.mu.Unlock()
		delete(s.b.kernel, s)
	})
}

// SubscribeKernel registers a kernel event subscriber.
func (b *Broker) SubscribeKernel() *KernelSubscription {
	s := &KernelSubscription{C: make(chan KernelEvent, subscriberBuffer), b: b}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.kernel[s] = struct{}{}
	return s
}

// PublishKernel delivers ev to kernel subscribers; a subscriber whose buffer
// is full misses it (the event is a hint to refetch, and the log says so).
func (b *Broker) PublishKernel(ev KernelEvent) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for s := range b.kernel {
		select {
		case s.C <- ev:
		default:
			b.log.Warn("kernel event dropped for a slow subscriber", "type", ev.Type, "session_id", ev.SessionID)
		}
	}
}
