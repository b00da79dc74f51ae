package core

import (
	"context"
	"time"
)

// Ownership decides which kernel of several sharing one database runs a
// session: the owner holds a lease in the database, renews it while it
// lives, and loses it a few seconds after it dies. Only the owner runs the
// session's turns, queue, approvals, questions and compaction. A kernel
// alone on its database has no Ownership: it owns every session.
type Ownership interface {
	// Acquire returns the session's owner, making this node the owner when
	// the session has none or its owner's lease expired.
	Acquire(ctx context.Context, sessionID string) (Owner, error)
	// Lookup returns the session's owner without taking the session; a
	// session without a live owner is reported as local.
	Lookup(ctx context.Context, sessionID string) (Owner, error)
	// Release gives the session up (it was deleted).
	Release(ctx context.Context, sessionID string)
	// Holds reports, without a database round trip, whether this node
	// certainly still holds the session's lease: it was confirmed recently
	// enough that it cannot have expired. Appends are refused otherwise,
	// so a node cut off longer than the lease never writes beside the
	// node that took its sessions over.
	Holds(sessionID string) bool
}

// Owner is the node that runs a session.
type Owner struct {
	NodeID string
	// URL is the owner's advertise URL (empty when local).
	URL string
	// Local: this node is the owner.
	Local bool
	// Acquired: this call made this node the owner (a new session, or one
	// taken over from a node whose lease expired).
	Acquired bool
}

// EventRelay carries the events published on this node to the other nodes
// of a cluster. Both methods must return at once (they are called on the
// publishing path).
type EventRelay interface {
	RelaySession(ev Event)
	RelayKernel(ev KernelEvent)
}

// OwnerBatch is implemented by an Ownership that looks many sessions up
// in one round trip.
type OwnerBatch interface {
	// LookupMany returns the owners of the sessions owned by another live
	// node; the others (local, or without a live owner) are left out.
	LookupMany(ctx context.Context, sessionIDs []string) (map[string]Owner, error)
}

// NodeInfo describes one kernel process serving the database.
type NodeInfo struct {
	ID            string
	AdvertiseURL  string
	StartedAt     time.Time
	LastHeartbeat time.Time
	SessionsOwned int
}

// NodeLister lists the kernel processes serving the database.
type NodeLister interface {
	Nodes(ctx context.Context) ([]NodeInfo, error)
}
