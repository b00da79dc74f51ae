package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/foya-dev/foya/core"
)

// maxPayload bounds one NOTIFY payload (PostgreSQL's limit is 8000 bytes).
const maxPayload = 7900

// mergeText bounds the text merged from consecutive deltas into one
// notification before it is encoded (and split again if escaping grew it).
const mergeText = 6000

// wire is one notification. Persisted events travel as a pointer (session
// and seq: receivers read them from the store, which stays the truth);
// live-only events and kernel events travel whole.
type wire struct {
	Node string             `json:"n"`
	Kind string             `json:"k"` // p: persisted, l: live, k: kernel, h: a node started
	S    string             `json:"s,omitempty"`
	Q    int64              `json:"q,omitempty"`
	T    core.EventType     `json:"t,omitempty"`
	At   time.Time          `json:"at,omitzero"`
	P    json.RawMessage    `json:"p,omitempty"`
	D    *core.DeltaPayload `json:"d,omitempty"`
	K    *core.KernelEvent  `json:"e,omitempty"`
	// R names a live event too large for a notification, stored in the
	// live_spill table: receivers read it from there.
	R int64 `json:"r,omitempty"`
}

// spillKeep is how long a spilled live event stays readable.
const spillKeep = time.Minute

// note is one encoded notification: its payload, or a live event too
// large for one (its encoding, to be stored in live_spill and named).
type note struct {
	payload string
	spill   []byte
	w       wire
}

// relay queues this node's events and sends them as notifications, in
// order, from one goroutine.
type relay struct {
	n    *Node
	mu   sync.Mutex
	q    []wire
	wake chan struct{}
	idle *sync.Cond // signalled when the queue is drained
	busy bool
}

func (r *relay) init(n *Node) {
	r.n, r.wake = n, make(chan struct{}, 1)
	r.idle = sync.NewCond(&r.mu)
}

// RelaySession implements core.EventRelay.
func (n *Node) RelaySession(ev core.Event) {
	if !n.relaying.Load() {
		return // not started: nothing is relayed yet
	}
	if ev.Seq == 0 && n.others.Load() == 0 {
		return // live-only events are for subscribers that exist now
	}
	w := wire{Node: n.id, S: ev.SessionID}
	if ev.Seq > 0 {
		w.Kind, w.Q = "p", ev.Seq
	} else {
		w.Kind, w.T, w.At, w.P, w.D = "l", ev.Type, ev.At, ev.Payload, ev.Delta
	}
	n.relay.push(w)
}

// RelayKernel implements core.EventRelay.
func (n *Node) RelayKernel(ev core.KernelEvent) {
	if !n.relaying.Load() {
		return
	}
	n.relay.push(wire{Node: n.id, Kind: "k", K: &ev})
}

func (r *relay) push(w wire) {
	r.mu.Lock()
	r.q = append(r.q, w)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// flush waits (bounded by ctx) until what is queued has been sent.
func (r *relay) flush(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		r.mu.Lock()
		for len(r.q) > 0 || r.busy {
			r.idle.Wait()
		}
		r.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	case <-time.After(2 * time.Second):
	}
}

func (r *relay) run(ctx context.Context) {
	var batch []wire
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		for {
			r.mu.Lock()
			batch, r.q = r.q, batch[:0]
			r.busy = len(batch) > 0
			if !r.busy {
				r.idle.Broadcast()
				r.mu.Unlock()
				break
			}
			r.mu.Unlock()
			r.send(ctx, batch)
			clear(batch)
			r.mu.Lock()
			r.busy = false
			r.mu.Unlock()
		}
	}
}

// send coalesces the batch and sends it as one round trip.
func (r *relay) send(ctx context.Context, batch []wire) {
	notes := encode(coalesce(batch), r.n)
	if len(notes) == 0 {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b := &pgx.Batch{}
	payloads := notes[:0]
	for _, nt := range notes {
		if nt.spill != nil {
			// Stored before the notifications of this batch are sent, so
			// it is readable when its pointer arrives, in order.
			var id int64
			if err := r.n.pool.QueryRow(sctx, `INSERT INTO live_spill (body) VALUES ($1) RETURNING id`, string(nt.spill)).Scan(&id); err != nil {
				if ctx.Err() == nil {
					r.n.log.Warn("store a large live event for other nodes; their subscribers miss it", "session_id", nt.w.S, "type", nt.w.T, "err", err)
				}
				continue
			}
			p, err := json.Marshal(wire{Node: nt.w.Node, Kind: "l", S: nt.w.S, T: nt.w.T, R: id})
			if err != nil {
				continue
			}
			nt.payload = string(p)
		}
		payloads = append(payloads, nt)
		b.Queue(`SELECT pg_notify($1, $2)`, channel, nt.payload)
	}
	if len(payloads) == 0 {
		return
	}
	if err := r.n.pool.SendBatch(sctx, b).Close(); err != nil && ctx.Err() == nil {
		// Subscribers elsewhere catch up from the store at the next
		// notification of the session; deltas in between are lost.
		r.n.log.Warn("notify other nodes", "events", len(payloads), "err", err)
	}
}

func deltaMergeable(a, b *wire) bool {
	if a.Kind != "l" || b.Kind != "l" || a.S != b.S || a.T != b.T || !a.T.IsDelta() || a.D == nil || b.D == nil {
		return false
	}
	x, y := a.D.ToolCallIndex, b.D.ToolCallIndex
	return (x == nil) == (y == nil) && (x == nil || *x == *y) && len(a.D.Text)+len(b.D.Text) <= mergeText
}

// coalesce merges consecutive persisted pointers of one session (the last
// seq says it all) and consecutive deltas of the same kind, in place.
func coalesce(batch []wire) []wire {
	out := batch[:0]
	for _, w := range batch {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.Kind == "p" && w.Kind == "p" && last.S == w.S {
				last.Q = max(last.Q, w.Q)
				continue
			}
			if deltaMergeable(last, &w) {
				d := *w.D // later deltas carry what is known of the call so far
				d.Text = last.D.Text + w.D.Text
				last.D = &d
				continue
			}
		}
		out = append(out, w)
	}
	return out
}

// encode marshals each notification, splitting delta text that does not
// fit one payload; another live event that does not fit is marked to be
// spilled (stored in the database and named by the notification).
func encode(ws []wire, n *Node) []note {
	out := make([]note, 0, len(ws))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	var add func(w wire)
	add = func(w wire) {
		buf.Reset()
		if err := enc.Encode(w); err != nil {
			n.log.Warn("encode a notification", "type", w.T, "err", err)
			return
		}
		if buf.Len() <= maxPayload {
			out = append(out, note{payload: string(bytes.TrimRight(buf.Bytes(), "\n"))})
			return
		}
		if w.D == nil || len(w.D.Text) < 2 {
			out = append(out, note{spill: bytes.Clone(bytes.TrimRight(buf.Bytes(), "\n")), w: w})
			return
		}
		cut := len(w.D.Text) / 2
		for cut > 0 && !utf8.RuneStart(w.D.Text[cut]) {
			cut--
		}
		if cut == 0 {
			cut = len(w.D.Text) / 2
		}
		a, b := *w.D, *w.D
		a.Text, b.Text = w.D.Text[:cut], w.D.Text[cut:]
		wa, wb := w, w
		wa.D, wb.D = &a, &b
		add(wa)
		add(wb)
	}
	for _, w := range ws {
		add(w)
	}
	return out
}

// listen opens the dedicated LISTEN connection.
func (n *Node) listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, n.cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("cluster: connect the listener: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("cluster: listen: %w", err)
	}
	return conn, nil
}

// listenLoop receives the other nodes' notifications, in order, and hands
// them to this node's subscribers; on a broken connection it reconnects
// and catches the watched sessions up from the store.
func (n *Node) listenLoop(ctx context.Context, conn *pgx.Conn) {
	in := inbound{n: n, published: map[string]int64{}}
	defer func() {
		if conn != nil {
			conn.Close(context.WithoutCancel(ctx))
		}
	}()
	for {
		if conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
			c, err := n.listen(ctx)
			if err != nil {
				if ctx.Err() == nil {
					n.log.Warn("reconnect the listener", "err", err)
				}
				continue
			}
			conn = c
			n.log.Info("listener reconnected")
			in.resync(ctx)
		}
		note, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			n.log.Warn("listener connection lost", "err", err)
			conn.Close(ctx)
			conn = nil
			continue
		}
		var w wire
		if err := json.Unmarshal([]byte(note.Payload), &w); err != nil {
			n.log.Warn("undecodable notification", "err", err)
			continue
		}
		if w.Node == n.id {
			continue
		}
		in.handle(ctx, w)
	}
}

// inbound is the listener's state: the last persisted seq handed to this
// node's subscribers, per session that has some.
type inbound struct {
	n         *Node
	published map[string]int64
}

func (in *inbound) handle(ctx context.Context, w wire) {
	b := in.n.broker
	switch w.Kind {
	case "p":
		if !b.HasSubscribers(w.S) {
			delete(in.published, w.S)
			return
		}
		last, ok := in.published[w.S]
		if !ok {
			// Subscribers read the store up to their start; a gap before
			// w.Q is filled by their own catch-up.
			last = w.Q - 1
		}
		if w.Q <= last {
			return
		}
		in.published[w.S] = in.deliverFrom(ctx, w.S, last, w.Q)
	case "l":
		if w.T == core.EventSessionDeleted {
			delete(in.published, w.S)
		}
		if !b.HasSubscribers(w.S) {
			return
		}
		if w.R != 0 {
			var ok bool
			if w, ok = in.unspill(ctx, w); !ok {
				return
			}
		}
		b.Deliver(core.Event{SessionID: w.S, Type: w.T, At: w.At, Payload: w.P, Delta: w.D})
	case "h":
		// A node started: send it live events from now on (the next
		// heartbeat counts the nodes again).
		in.n.others.Add(1)
	case "k":
		if w.K == nil {
			return
		}
		b.DeliverKernel(*w.K)
		if in.n.onKernel != nil {
			in.n.onKernel(*w.K)
		}
	}
}

// unspill reads a live event stored in live_spill.
func (in *inbound) unspill(ctx context.Context, w wire) (wire, bool) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var body string
	if err := in.n.pool.QueryRow(ctx, `SELECT body FROM live_spill WHERE id = $1`, w.R).Scan(&body); err != nil {
		if ctx.Err() == nil {
			in.n.log.Warn("read a large live event; subscribers here miss it", "session_id", w.S, "type", w.T, "spill_id", w.R, "err", err)
		}
		return wire{}, false
	}
	var full wire
	if err := json.Unmarshal([]byte(body), &full); err != nil || full.S != w.S {
		in.n.log.Warn("undecodable large live event", "session_id", w.S, "spill_id", w.R, "err", err)
		return wire{}, false
	}
	return full, true
}

// deliverFrom hands the session's persisted events after last, up to upTo
// (0: the head), to its subscribers, from the store; it returns the last
// seq handed over. Stopping at the notified seq keeps the owner's order of
// persisted and live events.
func (in *inbound) deliverFrom(ctx context.Context, sessionID string, last, upTo int64) int64 {
	for {
		limit := int64(500)
		if upTo > 0 {
			limit = min(limit, upTo-last)
		}
		if limit <= 0 {
			return last
		}
		evs, err := in.n.svc.Store().Events(ctx, sessionID, last, int(limit))
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, core.ErrNotFound) {
				in.n.log.Warn("read events for subscribers", "session_id", sessionID, "after_seq", last, "err", err)
			}
			return last
		}
		for _, ev := range evs {
			in.n.broker.Deliver(ev)
			last = ev.Seq
		}
		if int64(len(evs)) < limit {
			return last
		}
	}
}

// resync catches the watched sessions up after a listener outage.
func (in *inbound) resync(ctx context.Context) {
	for id, last := range in.published {
		if !in.n.broker.HasSubscribers(id) {
			delete(in.published, id)
			continue
		}
		in.published[id] = in.deliverFrom(ctx, id, last, 0)
	}
}
