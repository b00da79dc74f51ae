package pubsub

import (
	"github.com/foya-dev/foya/core"
	"log/slog"
	"sync"
)

// subscriberBuffer is how many events a subscriber may have pending before
// the broker starts dropping: live-only events are simply lost (they are
// lossy by design), persisted ones are re-read from the store.
const subscriberBuffer = 2048

// Broker fans session and kernel events out to subscribers. It never blocks
// a publisher: a slow subscriber's consecutive deltas are coalesced, and
// when its queue overflows it loses deltas and, for persisted events, is
// flagged as lagging and catches up from the store (see Service.Subscribe).
type Broker struct {
	log *slog.Logger

	mu       sync.RWMutex
	sessions map[string]map[*Subscription]struct{}
	kernel   map[*KernelSubscription]struct{}
	// relay carries published events to the other nodes of a cluster
	// (nil: a single kernel).
	relay core.EventRelay
}

// Config configures a Broker.
type Config struct {
	Logger *slog.Logger
	// Relay, when set, is handed every event published on this node as
	// well (for the other kernels on the database).
	Relay core.EventRelay
}

// HasSubscribers reports whether the session has subscribers on this node.
func (b *Broker) HasSubscribers(sessionID string) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.sessions[sessionID]) > 0
}

// New returns an empty broker.
func New(cfg Config) *Broker {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Broker{log: log, relay: cfg.Relay, sessions: map[string]map[*Subscription]struct{}{}, kernel: map[*KernelSubscription]struct{}{}}
}

// Subscription receives the events of one session. Events wait in a queue
// that the subscriber drains with Take; while they wait, consecutive deltas
// of the same kind (and tool call) are merged into one, so a subscriber
// that is behind gets fewer, longer deltas with exactly the same text, and
// one that keeps up gets each delta as it comes. Persisted events are never
// merged.
type Subscription struct {
	// Ready is signalled when the queue becomes non-empty or the
	// subscriber starts lagging.
	Ready chan struct{}

	b         *Broker
	sessionID string
	once      sync.Once

	mu     sync.Mutex
	queue  []queued
	spare  []queued // the previous batch's backing array, reused
	lagged bool
}

// queued is one pending event; merged holds the concatenated text of
// coalesced deltas (the shared DeltaPayload is never modified).
type queued struct {
	ev     core.Event
	merged []byte
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
	s := &Subscription{Ready: make(chan struct{}, 1), b: b, sessionID: sessionID}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sessions[sessionID] == nil {
		b.sessions[sessionID] = map[*Subscription]struct{}{}
	}
	b.sessions[sessionID][s] = struct{}{}
	return s
}

// Publish delivers ev to the session's subscribers without blocking, and
// to the other nodes of a cluster.
func (b *Broker) Publish(ev core.Event) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for s := range b.sessions[ev.SessionID] {
		s.push(ev)
	}
	if b.relay != nil {
		b.relay.RelaySession(ev)
	}
}

// Deliver hands an event that another node published to this node's
// subscribers (it is not relayed again).
func (b *Broker) Deliver(ev core.Event) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for s := range b.sessions[ev.SessionID] {
		s.push(ev)
	}
}

// coalescable reports whether delta ev may be merged into the pending q.
func coalescable(q *queued, ev *core.Event) bool {
	if !ev.Type.IsDelta() || q.ev.Type != ev.Type || q.ev.Delta == nil || ev.Delta == nil {
		return false
	}
	a, b := q.ev.Delta.ToolCallIndex, ev.Delta.ToolCallIndex
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func (s *Subscription) push(ev core.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lagged {
		// Everything up to the catch-up is re-read from the store; deltas
		// in between are lost, as for any slow subscriber.
		return
	}
	if n := len(s.queue); n > 0 && coalescable(&s.queue[n-1], &ev) {
		q := &s.queue[n-1]
		if q.merged == nil {
			q.merged = append(make([]byte, 0, 2*(len(q.ev.Delta.Text)+len(ev.Delta.Text))), q.ev.Delta.Text...)
		}
		q.merged = append(q.merged, ev.Delta.Text...)
		// Later deltas carry what is known of the call so far.
		q.ev.Delta = ev.Delta
		return
	}
	if len(s.queue) >= subscriberBuffer {
		if ev.Seq > 0 || ev.Type == core.EventSessionDeleted {
			s.lagged = true
			s.signal()
		}
		return
	}
	s.queue = append(s.queue, queued{ev: ev})
	if len(s.queue) == 1 {
		s.signal()
	}
}

func (s *Subscription) signal() {
	select {
	case s.Ready <- struct{}{}:
	default:
	}
}

// Take appends the pending events to buf (oldest first), empties the
// queue and reports whether the subscriber lagged (persisted events after
// those returned were dropped and must be read from the store).
func (s *Subscription) Take(buf []core.Event) ([]core.Event, bool) {
	s.mu.Lock()
	q, lagged := s.queue, s.lagged
	s.queue, s.spare, s.lagged = s.spare[:0], nil, false
	s.mu.Unlock()
	for i := range q {
		ev := q[i].ev
		if q[i].merged != nil {
			d := *ev.Delta
			d.Text = string(q[i].merged)
			ev.Delta = &d
		}
		buf = append(buf, ev)
		q[i] = queued{}
	}
	s.mu.Lock()
	if s.spare == nil && cap(q) <= 2*subscriberBuffer {
		s.spare = q[:0]
	}
	s.mu.Unlock()
	return buf, lagged
}

// KernelSubscription receives kernel-wide events.
type KernelSubscription struct {
	C    chan core.KernelEvent
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
	s := &KernelSubscription{C: make(chan core.KernelEvent, subscriberBuffer), b: b}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.kernel[s] = struct{}{}
	return s
}

// PublishKernel delivers ev to kernel subscribers; a subscriber whose buffer
// is full misses it (the event is a hint to refetch, and the log says so).
func (b *Broker) PublishKernel(ev core.KernelEvent) {
	b.DeliverKernel(ev)
	if b.relay != nil {
		b.relay.RelayKernel(ev)
	}
}

// DeliverKernel hands a kernel event that another node published to this
// node's subscribers (it is not relayed again).
func (b *Broker) DeliverKernel(ev core.KernelEvent) {
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
