package session

import (
	"context"
	"github.com/foya-dev/foya/core"
	"slices"
	"sync"
)

// DefaultHistoryCacheBytes bounds the histories the session service keeps in
// memory (an estimate of their text); see HistoryCache.
const DefaultHistoryCacheBytes = 16 << 20

// HistoryCache keeps the message projection of recently used sessions in
// memory, so that a turn does not read and decode a session's whole
// history from the store before every model request.
//
// An entry is the projection (inactive messages included, in seq order) as
// of the session's head sequence number. It is used only when the head
// read from the store is the entry's head: every change to a session's
// messages appends an event and moves the head, so a matching head means
// the same history, whichever kernel appended (on a shared PostgreSQL
// database another kernel's append moves the head too, and the entry is
// simply not used). Appends through this service update the entry in place
// (write-through) when they continue it exactly; anything else drops it.
// Applying a message twice is harmless (a message is added only past the
// entry's last seq; a rewind deactivates by seq), so a read racing an
// append cannot leave a wrong entry, at worst a stale head that misses.
//
// Entries are evicted least recently used beyond the byte bound, when a
// session is deleted, and all at once when the engine goes idle.
type HistoryCache struct {
	mu      sync.Mutex
	max     int64
	size    int64
	clock   uint64
	entries map[string]*historyEntry
}

type historyEntry struct {
	head int64
	msgs []core.Message // all messages, inactive included, in seq order
	size int64
	used uint64
	// checkpoint is the session's latest compaction_checkpoint event (nil:
	// none), once cpKnown.
	checkpoint *core.Event
	cpKnown    bool
	// born: the session was created through this service (the entry began
	// at its first event); anchored: an accepted boundary (route anchor)
	// was saved for it since. A session born here and never anchored has
	// no route anchor in the store.
	born, anchored bool
}

// entryOverhead is what an entry costs besides its messages.
const entryOverhead = 512

func newHistoryCache(max int64) *HistoryCache {
	return &HistoryCache{max: max, entries: map[string]*historyEntry{}}
}

// get returns the history of a session whose head is head, if cached. The
// slice is the caller's (a copy of the entry's); the messages' own slices
// are shared and must not be modified.
func (c *HistoryCache) get(sessionID string, head int64, includeInactive bool) ([]core.Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entryAtLocked(sessionID, head)
	if e == nil {
		return nil, false
	}
	c.clock++
	e.used = c.clock
	if includeInactive {
		return slices.Clone(e.msgs), true
	}
	return ActiveMessages(e.msgs), true
}

// put records msgs (inactive included) as the history at head.
func (c *HistoryCache) put(sessionID string, head int64, msgs []core.Message) {
	size := int64(entryOverhead)
	for i := range msgs {
		size += messageSize(&msgs[i])
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.max/4 {
		c.dropLocked(sessionID) // one session may not take the cache
		return
	}
	c.dropLocked(sessionID)
	c.clock++
	c.entries[sessionID] = &historyEntry{head: head, msgs: slices.Clip(slices.Clone(msgs)), size: size, used: c.clock}
	c.size += size
	c.evictLocked()
}

// appended updates the entry of a session after events were appended to it
// (evs in seq order, all of that session).
func (c *HistoryCache) appended(sessionID string, evs []core.Event) {
	if len(evs) == 0 {
		return
	}
	c.mu.Lock()
	wanted := c.entries[sessionID] != nil || evs[0].Seq == 1
	c.mu.Unlock()
	if !wanted {
		return
	}
	// Payloads are decoded outside the lock, which every session's
	// appends share.
	changes, ok := decodeChanges(evs)
	if !ok {
		c.drop(sessionID)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[sessionID]
	if e == nil {
		if evs[0].Seq != 1 {
			return
		}
		// A new session: its history is known from its first event.
		c.clock++
		e = &historyEntry{used: c.clock, cpKnown: true, born: true, size: entryOverhead}
		c.entries[sessionID] = e
		c.size += entryOverhead
	}
	if evs[0].Seq != e.head+1 {
		c.dropLocked(sessionID) // a gap: another writer's events are missing
		return
	}
	for i, ev := range evs {
		switch ev.Type {
		case core.EventMessageEnd, core.EventMessageImported:
			if n := len(e.msgs); n > 0 && e.msgs[n-1].Seq >= ev.Seq {
				break // read from the store already
			}
			// The entry's slice is never handed out (get copies it), so
			// appending in place is safe.
			e.msgs = append(e.msgs, *changes[i].msg)
			sz := messageSize(changes[i].msg)
			e.size += sz
			c.size += sz
		case core.EventCompactionCheckpoint:
			cp := ev
			e.checkpoint, e.cpKnown = &cp, true
		case core.EventHistoryRewound:
			for j := range e.msgs {
				if e.msgs[j].Seq >= changes[i].rewind {
					e.msgs[j].Active = false
				}
			}
		}
		e.head = ev.Seq
	}
	if e.size > c.max/4 {
		c.dropLocked(sessionID)
	}
	c.evictLocked()
}

// historyChange is what one appended event changes in a cached history.
type historyChange struct {
	msg    *core.Message // a message event's message
	rewind int64         // a rewind's FromSeq
}

// decodeChanges decodes the payloads of evs that change a history; ok is
// false when one does not decode.
func decodeChanges(evs []core.Event) (changes []historyChange, ok bool) {
	changes = make([]historyChange, len(evs))
	for i, ev := range evs {
		switch ev.Type {
		case core.EventMessageEnd, core.EventMessageImported:
			var p core.MessagePayload
			if ev.Decode(&p) != nil {
				return nil, false
			}
			m := p.Message
			m.Seq, m.Active = ev.Seq, true
			changes[i].msg = &m
		case core.EventHistoryRewound:
			var p core.RewindPayload
			if ev.Decode(&p) != nil {
				return nil, false
			}
			changes[i].rewind = p.FromSeq
		}
	}
	return changes, true
}

// entryAtLocked is the session's entry when it is at head; c.mu is held.
func (c *HistoryCache) entryAtLocked(sessionID string, head int64) *historyEntry {
	if e := c.entries[sessionID]; e != nil && e.head == head {
		return e
	}
	return nil
}

// At reports whether the session's cached history is at head (nothing was
// appended through this service since a read at head).
func (c *HistoryCache) At(sessionID string, head int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entryAtLocked(sessionID, head) != nil
}

// LatestCheckpoint returns the cached latest checkpoint event of a session
// at head (nil: none) and whether it is known.
func (c *HistoryCache) LatestCheckpoint(sessionID string, head int64) (*core.Event, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entryAtLocked(sessionID, head)
	if e == nil || !e.cpKnown {
		return nil, false
	}
	return e.checkpoint, true
}

// SetCheckpoint records the latest checkpoint event read for a session at
// head (nil: none).
func (c *HistoryCache) SetCheckpoint(sessionID string, head int64, ev *core.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entryAtLocked(sessionID, head); e != nil {
		e.checkpoint, e.cpKnown = ev, true
	}
}

// NoAnchor reports whether the session, at head, certainly has no route
// anchor in the store (born here, none saved since).
func (c *HistoryCache) NoAnchor(sessionID string, head int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entryAtLocked(sessionID, head)
	return e != nil && e.born && !e.anchored
}

// AnchorSaved records that a route anchor was saved for the session. It is
// called before the save, so a reader never skips a saved anchor.
func (c *HistoryCache) AnchorSaved(sessionID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[sessionID]; e != nil {
		e.anchored = true
	}
}

func (c *HistoryCache) drop(sessionID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(sessionID)
}

// clear empties the cache (the engine went idle).
func (c *HistoryCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.size = 0
}

func (c *HistoryCache) dropLocked(sessionID string) {
	if e := c.entries[sessionID]; e != nil {
		c.size -= e.size
		delete(c.entries, sessionID)
	}
}

func (c *HistoryCache) evictLocked() {
	for c.size > c.max && len(c.entries) > 0 {
		var oldest string
		var at uint64
		for id, e := range c.entries {
			if oldest == "" || e.used < at {
				oldest, at = id, e.used
			}
		}
		c.dropLocked(oldest)
	}
}

// messageSize estimates the memory a message holds: its texts, tool calls,
// attachments' names and native state, plus a fixed overhead.
func messageSize(m *core.Message) int64 {
	n := 256 + len(m.Text) + len(m.Reasoning) + len(m.Command) + len(m.Source) + len(m.TurnReason)
	if m.ProviderState != nil {
		n += len(m.ProviderState.Route) + len(m.ProviderState.Data)
	}
	for _, t := range m.ToolCalls {
		n += 128 + len(t.ID) + len(t.Name) + len(t.Input)
	}
	n += 256 * (len(m.Attachments) + len(m.BrowserElements) + len(m.Segments))
	return int64(n)
}

// History returns the history of session s as read by the caller (its
// HeadSeq is the head the caller saw): from memory when the cached history
// is at that head, otherwise from the store (and then cached).
func (s *Service) History(ctx context.Context, sess core.Session, includeInactive bool) ([]core.Message, error) {
	if msgs, ok := s.history.get(sess.ID, sess.HeadSeq, includeInactive); ok {
		return msgs, nil
	}
	all, err := s.store.Messages(ctx, sess.ID, true)
	if err != nil {
		return nil, err
	}
	s.history.put(sess.ID, sess.HeadSeq, all)
	if includeInactive {
		return all, nil
	}
	return ActiveMessages(all), nil
}

// DropHistories empties the history cache (to hand memory back when idle).
func (s *Service) DropHistories() { s.history.clear() }

// Histories returns the service's cache of history projections, which the
// engine consults for checkpoints and route anchors.
func (s *Service) Histories() *HistoryCache { return s.history }
