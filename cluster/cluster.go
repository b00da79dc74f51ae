// Package cluster lets several Foya kernels share one PostgreSQL database:
// each node registers itself and heartbeats in the nodes table, owns
// sessions through leases in session_leases (core.Ownership), and relays
// its events to the other nodes with LISTEN/NOTIFY (core.EventRelay), the
// event store staying the truth. See docs/cluster.md.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/pubsub"
	"github.com/foya-dev/foya/core/session"
)

// Defaults of Config.
const (
	DefaultLeaseTTL  = 5 * time.Second
	DefaultHeartbeat = time.Second
	// channel is the NOTIFY channel every node listens on.
	channel = "foya_events"
	// forgetAfter is how long a silent node stays in the nodes table.
	forgetAfter = time.Hour
)

// Config configures a node.
type Config struct {
	// DatabaseURL is the PostgreSQL connection string (postgres://…).
	DatabaseURL string
	Logger      *slog.Logger
	// LeaseTTL is how long a lease outlives its last renewal (default 5s):
	// a session whose owner died is taken over within about this long.
	LeaseTTL time.Duration
	// Heartbeat is the interval of heartbeats and lease renewals (default 1s).
	Heartbeat time.Duration
}

// Node is this kernel's membership of the cluster.
type Node struct {
	cfg     Config
	log     *slog.Logger
	pool    *pgxpool.Pool
	id      string
	started time.Time
	// url is the base URL other nodes reach this node's /graphql at.
	url string
	// afterTake, set by tests only, runs in Acquire between a failed take
	// of a lease and the read of its holder.
	afterTake func()

	// relaying is set by Start: before it, RelaySession and RelayKernel
	// (called by the broker the node was given to as its relay) drop events.
	relaying atomic.Bool

	mu sync.Mutex
	// owned holds, per session whose lease this node holds, when the
	// lease was last confirmed (monotonic clock): the start of the
	// statement that took or renewed it.
	owned map[string]time.Time

	// others is how many other live nodes there were at the last
	// heartbeat (see othersWindow); live-only events are not sent when
	// there are none.
	others atomic.Int32

	svc      *session.Service
	broker   *pubsub.Broker
	onKernel func(core.KernelEvent)

	relay  relay
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool
}

// Open connects to the database, creates the cluster's tables when missing
// and registers the node. Start makes it work.
func Open(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.DatabaseURL == "" {
		return nil, errors.New("cluster: a database URL is required")
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.Heartbeat*2 > cfg.LeaseTTL {
		return nil, fmt.Errorf("cluster: the lease TTL (%s) must be at least twice the heartbeat (%s)", cfg.LeaseTTL, cfg.Heartbeat)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	pool, err := pgxpool.New(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("cluster: connect: %w", err)
	}
	n := &Node{cfg: cfg, log: log, pool: pool, id: newNodeID(), owned: map[string]time.Time{}}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	if err := pool.QueryRow(ctx, `INSERT INTO nodes (id, advertise_url) VALUES ($1, '') RETURNING started_at`,
		n.id).Scan(&n.started); err != nil {
		pool.Close()
		return nil, fmt.Errorf("cluster: register node: %w", err)
	}
	n.log = log.With("node_id", n.id)
	n.relay.init(n)
	return n, nil
}

func newNodeID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "node_" + hex.EncodeToString(b[:])
}

const schema = `
CREATE TABLE IF NOT EXISTS nodes (
	id text PRIMARY KEY,
	advertise_url text NOT NULL,
	started_at timestamptz NOT NULL DEFAULT now(),
	last_heartbeat timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS session_leases (
	session_id text PRIMARY KEY,
	node_id text NOT NULL,
	expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS session_leases_node ON session_leases (node_id);
CREATE INDEX IF NOT EXISTS session_leases_expiry ON session_leases (expires_at);
CREATE TABLE IF NOT EXISTS live_spill (
	id bigserial PRIMARY KEY,
	body text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);
`

// migrate creates the tables; an advisory lock keeps nodes starting
// together from racing on the catalog.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("cluster: migrate: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7760221)`); err != nil {
		return fmt.Errorf("cluster: migrate: %w", err)
	}
	if _, err := tx.Exec(ctx, schema); err != nil {
		return fmt.Errorf("cluster: migrate: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("cluster: migrate: %w", err)
	}
	return nil
}

// ID is the node's id (new at every start).
func (n *Node) ID() string { return n.id }

// StartedAt is when the node registered.
func (n *Node) StartedAt() time.Time { return n.started }

// Start publishes the node's advertise URL (the base URL other nodes reach
// its /graphql at, e.g. http://10.0.0.5:4777), relays svc's events to the
// other nodes and theirs to svc's subscribers, and runs the heartbeat,
// lease renewals and take-over of sessions whose owner died. onKernel
// (optional) sees every kernel event another node published, e.g. to
// reload the catalog.
func (n *Node) Start(ctx context.Context, svc *session.Service, advertiseURL string, onKernel func(core.KernelEvent)) error {
	n.svc, n.broker, n.onKernel, n.url = svc, svc.Broker(), onKernel, advertiseURL
	if _, err := n.pool.Exec(ctx, `UPDATE nodes SET advertise_url = $2 WHERE id = $1`, n.id, advertiseURL); err != nil {
		return fmt.Errorf("cluster: publish the advertise URL: %w", err)
	}
	ctx, n.cancel = context.WithCancel(context.WithoutCancel(ctx))
	l, err := n.listen(ctx)
	if err != nil {
		n.cancel()
		return err
	}
	n.relaying.Store(true) // the broker was built with this node as its relay
	n.beat(ctx)
	n.relay.push(wire{Node: n.id, Kind: "h"})
	n.wg.Add(3)
	go func() { defer n.wg.Done(); n.heartbeatLoop(ctx) }()
	go func() { defer n.wg.Done(); n.relay.run(ctx) }()
	go func() { defer n.wg.Done(); n.listenLoop(ctx, l) }()
	return nil
}

// Close stops the node, gives up its leases (other nodes take its sessions
// at once) and removes it from the nodes table. Call it after the turns
// stopped.
func (n *Node) Close(ctx context.Context) {
	if n.closed.Swap(true) {
		return
	}
	if n.cancel != nil {
		n.relay.flush(ctx)
		n.cancel()
		n.wg.Wait()
	}
	if _, err := n.pool.Exec(ctx, `DELETE FROM session_leases WHERE node_id = $1`, n.id); err != nil {
		n.log.Warn("give up leases", "err", err)
	}
	if _, err := n.pool.Exec(ctx, `DELETE FROM nodes WHERE id = $1`, n.id); err != nil {
		n.log.Warn("leave the nodes table", "err", err)
	}
	n.pool.Close()
}

// othersWindow is how many lease periods after its last heartbeat another
// node still counts as alive for live events (see beat).
const othersWindow = 3

func (n *Node) ttlSeconds() float64 { return n.cfg.LeaseTTL.Seconds() }

// Holds implements core.Ownership: the lease was confirmed less than the
// TTL minus one heartbeat ago (a margin for clock rate differences and the
// statement's own duration).
func (n *Node) Holds(sessionID string) bool {
	n.mu.Lock()
	at, ok := n.owned[sessionID]
	n.mu.Unlock()
	return ok && time.Since(at) < n.cfg.LeaseTTL-n.cfg.Heartbeat
}

// Acquire implements core.Ownership.
//
// A lease that expires between the attempt to take it and the read of its
// holder is taken on a second attempt: a node that waits for a dead
// owner's lease to expire (edge's forwarder polls) would otherwise be told
// at that moment that the owner cannot be reached.
func (n *Node) Acquire(ctx context.Context, sessionID string) (core.Owner, error) {
	for attempt := 1; ; attempt++ {
		o, taken, err := n.take(ctx, sessionID)
		if err != nil || taken {
			return o, err
		}
		if n.afterTake != nil {
			n.afterTake()
		}
		o, live, err := n.owner(ctx, sessionID)
		if err != nil {
			return core.Owner{}, err
		}
		if live && o.URL != "" {
			return o, nil
		}
		if live || attempt == 2 {
			return core.Owner{}, core.Errorf(core.CodeUnavailable, "session %s is owned by node %s, which cannot be reached; retry in a few seconds", sessionID, o.NodeID)
		}
	}
}

// take tries to take or renew the lease of a session (taken), which it
// can unless another node holds it unexpired.
func (n *Node) take(ctx context.Context, sessionID string) (o core.Owner, taken bool, err error) {
	start := time.Now()
	var got string
	err = n.pool.QueryRow(ctx, `
INSERT INTO session_leases AS l (session_id, node_id, expires_at)
VALUES ($1, $2, now() + make_interval(secs => $3))
ON CONFLICT (session_id) DO UPDATE SET node_id = EXCLUDED.node_id, expires_at = EXCLUDED.expires_at
WHERE l.expires_at < now() OR l.node_id = EXCLUDED.node_id
RETURNING session_id`, sessionID, n.id, n.ttlSeconds()).Scan(&got)
	switch {
	case err == nil:
		n.mu.Lock()
		_, had := n.owned[sessionID]
		acquired := !had
		n.owned[sessionID] = start
		n.mu.Unlock()
		if acquired {
			n.log.Debug("session lease taken", "session_id", sessionID)
		}
		return core.Owner{NodeID: n.id, Local: true, Acquired: acquired}, true, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return core.Owner{}, false, fmt.Errorf("take lease: %w", err)
	}
	n.mu.Lock()
	delete(n.owned, sessionID)
	n.mu.Unlock()
	return core.Owner{}, false, nil
}

// owner reads the lease of a session: its holder and whether it is live.
func (n *Node) owner(ctx context.Context, sessionID string) (core.Owner, bool, error) {
	var o core.Owner
	var live bool
	err := n.pool.QueryRow(ctx, `
SELECT l.node_id, coalesce(n.advertise_url, ''), l.expires_at > now()
FROM session_leases l LEFT JOIN nodes n ON n.id = l.node_id
WHERE l.session_id = $1`, sessionID).Scan(&o.NodeID, &o.URL, &live)
	if errors.Is(err, pgx.ErrNoRows) {
		return core.Owner{}, false, nil
	}
	if err != nil {
		return core.Owner{}, false, fmt.Errorf("read lease of %s: %w", sessionID, err)
	}
	o.Local = o.NodeID == n.id
	return o, live, nil
}

// Lookup implements core.Ownership.
func (n *Node) Lookup(ctx context.Context, sessionID string) (core.Owner, error) {
	o, live, err := n.owner(ctx, sessionID)
	if err != nil {
		return core.Owner{}, err
	}
	if !live || o.Local || o.URL == "" {
		return core.Owner{NodeID: n.id, Local: true}, nil
	}
	return o, nil
}

// LookupMany implements core.OwnerBatch.
func (n *Node) LookupMany(ctx context.Context, sessionIDs []string) (map[string]core.Owner, error) {
	rows, err := n.pool.Query(ctx, `
SELECT l.session_id, l.node_id, n.advertise_url
FROM session_leases l JOIN nodes n ON n.id = l.node_id
WHERE l.session_id = ANY($1) AND l.expires_at > now() AND l.node_id <> $2 AND n.advertise_url <> ''`, sessionIDs, n.id)
	if err != nil {
		return nil, fmt.Errorf("read leases: %w", err)
	}
	defer rows.Close()
	out := map[string]core.Owner{}
	for rows.Next() {
		var id string
		var o core.Owner
		if err := rows.Scan(&id, &o.NodeID, &o.URL); err != nil {
			return nil, fmt.Errorf("read leases: %w", err)
		}
		out[id] = o
	}
	return out, rows.Err()
}

// Release implements core.Ownership.
func (n *Node) Release(ctx context.Context, sessionID string) {
	n.mu.Lock()
	delete(n.owned, sessionID)
	n.mu.Unlock()
	if _, err := n.pool.Exec(context.WithoutCancel(ctx), `DELETE FROM session_leases WHERE session_id = $1`, sessionID); err != nil {
		n.log.Warn("release session lease", "session_id", sessionID, "err", err)
	}
}

// Nodes implements core.NodeLister: the nodes heard from in the last
// minute, oldest first.
func (n *Node) Nodes(ctx context.Context) ([]core.NodeInfo, error) {
	rows, err := n.pool.Query(ctx, `
SELECT n.id, n.advertise_url, n.started_at, n.last_heartbeat,
       count(l.session_id) FILTER (WHERE l.expires_at > now())
FROM nodes n LEFT JOIN session_leases l ON l.node_id = n.id
WHERE n.last_heartbeat > now() - interval '1 minute'
GROUP BY n.id ORDER BY n.started_at, n.id`)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	defer rows.Close()
	var out []core.NodeInfo
	for rows.Next() {
		var ni core.NodeInfo
		var owned int64
		if err := rows.Scan(&ni.ID, &ni.AdvertiseURL, &ni.StartedAt, &ni.LastHeartbeat, &owned); err != nil {
			return nil, fmt.Errorf("list nodes: %w", err)
		}
		ni.SessionsOwned = int(owned)
		ni.StartedAt, ni.LastHeartbeat = ni.StartedAt.UTC(), ni.LastHeartbeat.UTC()
		out = append(out, ni)
	}
	return out, rows.Err()
}

func (n *Node) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(n.cfg.Heartbeat)
	defer t.Stop()
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n.beat(ctx)
		if i%60 == 0 {
			if _, err := n.pool.Exec(ctx, `DELETE FROM nodes WHERE last_heartbeat < now() - make_interval(secs => $1)`, forgetAfter.Seconds()); err != nil && ctx.Err() == nil {
				n.log.Warn("forget silent nodes", "err", err)
			}
		}
		if i%10 == 0 {
			if _, err := n.pool.Exec(ctx, `DELETE FROM live_spill WHERE created_at < now() - make_interval(secs => $1)`, spillKeep.Seconds()); err != nil && ctx.Err() == nil {
				n.log.Warn("expire spilled live events", "err", err)
			}
		}
	}
}

// beat renews the node's row and leases, counts the other live nodes and
// takes over the sessions whose owner's lease expired.
func (n *Node) beat(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.LeaseTTL)
	defer cancel()
	tag, err := n.pool.Exec(ctx, `UPDATE nodes SET last_heartbeat = now() WHERE id = $1`, n.id)
	if err == nil && tag.RowsAffected() == 0 {
		// Forgotten after a long partition: register again.
		_, err = n.pool.Exec(ctx, `INSERT INTO nodes (id, advertise_url, started_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`, n.id, n.url, n.started)
	}
	if err != nil {
		if ctx.Err() == nil {
			n.log.Warn("heartbeat", "err", err)
		}
		return
	}
	n.renew(ctx)
	// A node counts for live events while its last heartbeat is within
	// othersWindow leases: a late heartbeat (a busy or paused node) must
	// not cut its subscribers off the deltas, and a NOTIFY that no node
	// hears costs little. Ownership still expires after one lease.
	var others int32
	if err := n.pool.QueryRow(ctx, `SELECT count(*) FROM nodes WHERE id <> $1 AND last_heartbeat > now() - make_interval(secs => $2)`,
		n.id, othersWindow*n.ttlSeconds()).Scan(&others); err == nil {
		n.others.Store(others)
	}
	n.sweep(ctx)
}

// renew extends this node's leases; a lease found lost (the node was cut
// off longer than the TTL and another node took the session) is dropped.
func (n *Node) renew(ctx context.Context) {
	start := time.Now()
	rows, err := n.pool.Query(ctx, `UPDATE session_leases SET expires_at = now() + make_interval(secs => $2) WHERE node_id = $1 RETURNING session_id`, n.id, n.ttlSeconds())
	if err != nil {
		if ctx.Err() == nil {
			n.log.Warn("renew leases", "err", err)
		}
		return
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		if ctx.Err() == nil {
			n.log.Warn("renew leases", "err", err)
		}
		return
	}
	held := make(map[string]bool, len(ids))
	for _, id := range ids {
		held[id] = true
	}
	n.mu.Lock()
	var lost []string
	for id, at := range n.owned {
		if !held[id] && at.Before(start) { // not one taken while renewing
			lost = append(lost, id)
			delete(n.owned, id)
		}
	}
	for id := range held {
		n.owned[id] = start
	}
	n.mu.Unlock()
	for _, id := range lost {
		n.log.Warn("session lease lost to another node", "session_id", id)
	}
}

// sweep takes over sessions whose owner's lease expired, recovering their
// interrupted turn as at a restart (one node wins each session).
func (n *Node) sweep(ctx context.Context) {
	rows, err := n.pool.Query(ctx, `SELECT session_id FROM session_leases WHERE expires_at < now() ORDER BY expires_at LIMIT 100`)
	if err != nil {
		if ctx.Err() == nil {
			n.log.Warn("find expired leases", "err", err)
		}
		return
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || n.svc == nil {
		return
	}
	for _, id := range ids {
		if _, err := n.svc.Session(ctx, id); errors.Is(err, core.ErrNotFound) {
			n.Release(ctx, id) // deleted while its owner was away
			continue
		}
		o, err := n.svc.AcquireSession(ctx, id)
		if err != nil {
			if ctx.Err() == nil {
				n.log.Warn("take over a session", "session_id", id, "err", err)
			}
			continue
		}
		if o.Local && o.Acquired {
			n.log.Info("session taken over from a stopped node", "session_id", id)
		}
	}
}
