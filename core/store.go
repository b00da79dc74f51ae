package core

import (
	"context"
	"time"
)

// AnyHead disables the optimistic head check of EventStore.Append.
const AnyHead int64 = -1

// EventStore is the append-only session log. Implementations run the
// conformance suite in storage.
type EventStore interface {
	// Append assigns the next seqs of the session to events and writes them,
	// together with every projection they affect, in one transaction. When
	// expectedHead is not AnyHead it must equal the session's current head seq,
	// else the error matches ErrConflict and nothing is written. Appending to a
	// deleted session fails with ErrNotFound.
	Append(ctx context.Context, sessionID string, expectedHead int64, events []Event) ([]Event, error)
	// Events returns persisted events with seq > afterSeq in seq order, at most
	// limit of them.
	Events(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]Event, error)
	// HeadSeq returns the seq of the session's last event (0 for none).
	HeadSeq(ctx context.Context, sessionID string) (int64, error)
}

// SessionFilter selects sessions to list.
type SessionFilter struct {
	IncludeChildren bool
	ParentID        string
	// ParentIDs, when ParentID is empty, selects the children of any of
	// these sessions, in one list (Session.children of a page of sessions).
	ParentIDs    []string
	ProjectID    string
	ConnectionID string
	// NotIdle selects only sessions whose phase is not idle.
	NotIdle bool
	// First, when > 0, returns at most that many sessions; After, when
	// set, only the sessions listed after that one (keyset paging in list
	// order, stable while sessions are created).
	First int
	After string
	// Usage also reads each session's usage totals (Session.UsageTotals)
	// when the store keeps them with the session; a list without them
	// reads eight columns fewer per session.
	Usage bool
	// IDsOnly reads only the sessions' ids (every other field is left
	// zero), for a caller that needs nothing else: the store may answer
	// from its list index alone, without reading the sessions' rows.
	IDsOnly bool
	// Into, when its capacity holds the page, is the array the store
	// writes the page's sessions into (its length and elements are
	// ignored): a caller that lists pages one after another and is done
	// with each before the next reuses one array instead of the garbage
	// of one per page. The returned page then shares it.
	Into []Session
}

// SessionStore reads the session projections and removes sessions.
type SessionStore interface {
	Session(ctx context.Context, id string) (Session, error)
	Sessions(ctx context.Context, f SessionFilter) ([]Session, error)
	// Messages returns the projected messages in seq order; inactive ones
	// (rewound) only when includeInactive is set.
	Messages(ctx context.Context, sessionID string, includeInactive bool) ([]Message, error)
	// MessagePager reads pages of them without reading the whole session.
	MessagePager
	// DeleteSession removes the session and its descendants with their events
	// and projections in one transaction and records tombstones, so that late
	// appends fail with ErrNotFound. It returns the ids deleted, children
	// first, and the artifact hashes nothing refers to any more.
	DeleteSession(ctx context.Context, id string) (DeletedSessions, error)
}

// DeletedSessions is what a session deletion removed.
type DeletedSessions struct {
	// IDs are the deleted sessions, descendants first.
	IDs []string
	// OrphanBlobs are artifact hashes no remaining message, attachment
	// record or terminal_exited event (outputSha256) refers to; the caller
	// deletes their bytes.
	OrphanBlobs []string
}

// ProjectStore keeps project directory references.
type ProjectStore interface {
	CreateProject(ctx context.Context, p Project) error
	Project(ctx context.Context, id string) (Project, error)
	Projects(ctx context.Context) ([]Project, error)
	DeleteProject(ctx context.Context, id string) error
}

// Store is everything the session service persists.
type Store interface {
	EventStore
	SessionStore
	ProjectStore
}

// DatabaseBackup writes a consistent copy of the kernel's database while
// the kernel runs (the SQLite store; a store that cannot answers
// CodeUnavailable saying what backs it up instead).
type DatabaseBackup interface {
	// Backup writes the copy to dst, an absolute path that must not exist
	// in a directory that does (CodeBadInput, CodeConflict otherwise):
	// all of it or nothing, never overwriting a file.
	Backup(ctx context.Context, dst string) error
}

// UsageStore reads the usage ledger (PRV-11). Rows are written with usage
// events and survive session deletion.
type UsageStore interface {
	// UsageTotals sums the ledger for one session, or for all when sessionID
	// is empty.
	UsageTotals(ctx context.Context, sessionID string) (Usage, error)
}

// SessionUsageTotals is implemented by a UsageStore that sums the ledger
// of many sessions in one read (the usage of a page of sessions).
type SessionUsageTotals interface {
	// SessionUsageTotals returns UsageTotals of each session id; a session
	// without ledger rows may be missing from the map (its totals are 0).
	SessionUsageTotals(ctx context.Context, sessionIDs []string) (map[string]Usage, error)
}

// RouteAnchor is the accepted boundary of a session on a route (PRV-10): the
// history prefix (through ThroughSeq, with Digest) that the route last
// accepted without overflow, the real input tokens it reported and the local
// estimate of that same request. It anchors budget estimates across restarts
// and is used only while route and digest still match.
type RouteAnchor struct {
	SessionID       string
	Route           string
	ThroughSeq      int64
	Digest          string
	InputTokens     int64
	EstimatedTokens int64
}

// HistoryForker is what a store may offer to branch a session (SES-10)
// without moving its history through the kernel: in one transaction it
// appends created (the new session's session_created, seq 1) and, as
// message_imported events at seqs 2, 3, …, the active messages of
// sourceID with seq <= throughSeq, in order, with their projection rows —
// what appending those events would write. It returns the new session's
// head.
type HistoryForker interface {
	ForkHistory(ctx context.Context, created Event, sourceID string, throughSeq int64) (head int64, err error)
}

// HistoryStore serves compaction and budgets.
type HistoryStore interface {
	// LatestEvent returns the session's newest event of type t (NOT_FOUND if none).
	LatestEvent(ctx context.Context, sessionID string, t EventType) (Event, error)
	RouteAnchor(ctx context.Context, sessionID, route string) (RouteAnchor, error)
	SaveRouteAnchor(ctx context.Context, a RouteAnchor) error
}

// SessionImporter writes an imported session: its events (seqs from 1),
// their projections and the attachment records they refer to, in one
// transaction; usage events go to the ledger marked as imported (they count
// in the session's usage, not in the kernel's totals).
type SessionImporter interface {
	ImportSession(ctx context.Context, sessionID string, events []Event, attachments []Attachment) ([]Event, error)
}

// KernelUsageRecorder writes a usage ledger row that belongs to no session:
// spending of the kernel itself, such as generateImage or generateVideo
// called without a sessionId. It counts in usageTotals.
type KernelUsageRecorder interface {
	RecordKernelUsage(ctx context.Context, p UsagePayload, at time.Time) error
}
