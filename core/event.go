package core

import (
	"encoding/json"
	"fmt"
	"time"
)

// EventType is the seeds' snake_case event name; it is stored as a string.
type EventType string

// Event types. Persisted ones get a per-session seq; live-only ones do not.
const (
	EventSessionCreated       EventType = "session_created"
	EventSessionUpdated       EventType = "session_updated"
	EventPhaseChanged         EventType = "phase_changed"
	EventTurnStarted          EventType = "turn_started"
	EventMessageDelta         EventType = "message_delta"
	EventReasoningDelta       EventType = "reasoning_delta"
	EventToolCallDelta        EventType = "tool_call_delta"
	EventMessageEnd           EventType = "message_end"
	EventMessageImported      EventType = "message_imported"
	EventToolStarted          EventType = "tool_started"
	EventApprovalRequested    EventType = "approval_requested"
	EventApprovalResolved     EventType = "approval_resolved"
	EventQuestionRequested    EventType = "question_requested"
	EventQuestionAnswered     EventType = "question_answered"
	EventUsage                EventType = "usage"
	EventTurnFinished         EventType = "turn_finished"
	EventQueueSnapshot        EventType = "queue_snapshot"
	EventHistoryRewound       EventType = "history_rewound"
	EventCompactionStarted    EventType = "compaction_started"
	EventCompactionCheckpoint EventType = "compaction_checkpoint"
	EventSessionDeleted       EventType = "session_deleted"
	EventResyncRequired       EventType = "resync_required"
	EventHookStarted          EventType = "hook_started"
	EventHookFinished         EventType = "hook_finished"
	EventHookUntrusted        EventType = "hook_untrusted"
	// EventRetryScheduled announces the wait before a model request is sent
	// again (live only; payload RetryPayload).
	EventRetryScheduled EventType = "retry_scheduled"
	// EventRouteFallback records that a model call failed and the turn
	// continued on the next model of the fallback chain (payload
	// RouteFallbackPayload).
	EventRouteFallback EventType = "route_fallback"
	// EventGuardianVerdict records the guardian model's verdict on a tool
	// call of a GUARDED session (payload GuardianVerdictPayload).
	EventGuardianVerdict EventType = "guardian_verdict"
)

// LiveOnly reports whether events of type t are never persisted (MSG-12):
// deltas, queue snapshots and stream control events carry no seq.
func (t EventType) LiveOnly() bool {
	switch t {
	case EventMessageDelta, EventReasoningDelta, EventToolCallDelta,
		EventQueueSnapshot, EventResyncRequired, EventSessionDeleted, EventRetryScheduled,
		EventTerminalOutput:
		return true
	}
	return false
}

// IsDelta reports whether t is one of the live-only streaming deltas
// (message_delta, reasoning_delta, tool_call_delta).
func (t EventType) IsDelta() bool {
	return t == EventMessageDelta || t == EventReasoningDelta || t == EventToolCallDelta
}

// Event is one entry of a session's log, or a live-only notification when
// Seq is 0.
type Event struct {
	SessionID string
	Seq       int64
	Type      EventType
	At        time.Time
	Payload   json.RawMessage
	// Delta carries the payload of a live delta event typed, with Payload
	// left empty: deltas never reach storage, so they are never marshalled
	// on the hot path (PayloadJSON and Decode marshal it on demand). The
	// pointee is shared by every subscriber and must not be modified.
	Delta *DeltaPayload
}

// PayloadJSON is the event's payload as JSON (marshalled on demand for a
// typed live payload).
func (e Event) PayloadJSON() json.RawMessage {
	if e.Payload == nil && e.Delta != nil {
		raw, _ := json.Marshal(e.Delta) // a struct of strings and an int: cannot fail
		return raw
	}
	return e.Payload
}

// NewEvent builds an unsequenced event with payload marshalled to JSON; the
// payload of a delta event is kept typed (see Event.Delta).
func NewEvent(sessionID string, t EventType, payload any) (Event, error) {
	if t.IsDelta() {
		switch p := payload.(type) {
		case DeltaPayload:
			return Event{SessionID: sessionID, Type: t, At: time.Now().UTC(), Delta: &p}, nil
		case *DeltaPayload:
			return Event{SessionID: sessionID, Type: t, At: time.Now().UTC(), Delta: p}, nil
		}
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return Event{}, fmt.Errorf("marshal %s payload: %w", t, err)
	}
	return Event{SessionID: sessionID, Type: t, At: time.Now().UTC(), Payload: raw}, nil
}

// Decode unmarshals the payload into v.
func (e Event) Decode(v any) error {
	if p, ok := v.(*DeltaPayload); ok && e.Payload == nil && e.Delta != nil {
		*p = *e.Delta
		return nil
	}
	if err := json.Unmarshal(e.PayloadJSON(), v); err != nil {
		return fmt.Errorf("decode %s event %d of session %s: %w", e.Type, e.Seq, e.SessionID, err)
	}
	return nil
}

// SessionPayload is the payload of session_created and session_updated: the
// full metadata after the change, plus the names of the fields that changed.
type SessionPayload struct {
	Session SessionMeta `json:"session"`
	Changed []string    `json:"changed,omitempty"`
}

// PhasePayload is the payload of phase_changed.
type PhasePayload struct {
	Phase  Phase  `json:"phase"`
	Reason string `json:"reason,omitempty"`
}

// MessagePayload is the payload of message_end and message_imported.
type MessagePayload struct {
	Message Message `json:"message"`
}

// RewindPayload is the payload of history_rewound: every message with
// seq >= FromSeq becomes inactive. Payloads are never rewritten (MSG-13).
type RewindPayload struct {
	FromSeq int64 `json:"fromSeq"`
	// Text is the rewound user message, returned to the input box.
	Text string `json:"text,omitempty"`
	// Files are the per-file outcomes of the restore.
	Files []RewindFile `json:"files,omitempty"`
}

// DeltaPayload is the payload of the live-only delta events.
type DeltaPayload struct {
	Text          string `json:"text,omitempty"`
	ToolCallIndex *int   `json:"toolCallIndex,omitempty"`
	ToolCallID    string `json:"toolCallId,omitempty"`
	ToolName      string `json:"toolName,omitempty"`
}

// ResyncPayload tells a subscriber that fell too far behind where to resume.
type ResyncPayload struct {
	LastSeq int64 `json:"lastSeq"`
}

// KernelEventType names a kernel-wide change.
type KernelEventType string

// Kernel event types.
const (
	KernelSessionCreated KernelEventType = "session_created"
	KernelSessionUpdated KernelEventType = "session_updated"
	KernelSessionDeleted KernelEventType = "session_deleted"
	KernelCatalogUpdated KernelEventType = "catalog_updated"
	// KernelSubscribed is the first event of a kernelEvents(ready: true)
	// subscription, sent once it receives every later change.
	KernelSubscribed KernelEventType = "subscribed"
)

// KernelEvent is a session-list or catalog change, for sidebars.
type KernelEvent struct {
	Type         KernelEventType
	SessionID    string
	ConnectionID string
	// McpServerID is the MCP server a catalog_updated is about.
	McpServerID string
	At          time.Time
}

// The ids of a kernel event as GraphQL serves them: null when not set.
func (e KernelEvent) SessionIDOrNil() *string    { return orNil(e.SessionID) }
func (e KernelEvent) ConnectionIDOrNil() *string { return orNil(e.ConnectionID) }
func (e KernelEvent) McpServerIDOrNil() *string  { return orNil(e.McpServerID) }

// UsagePayload is the payload of a usage event: one provider usage report
// (or a local estimate) and where it was spent. Appending it also writes a
// row of the usage ledger, which survives session deletion.
type UsagePayload struct {
	Usage        Usage  `json:"usage"`
	Route        string `json:"route"`
	ConnectionID string `json:"connectionId"`
	// Purpose is what the request was for: turn, title or compaction.
	Purpose string `json:"purpose"`
}

// TurnPayload is the payload of turn_started and turn_finished.
type TurnPayload struct {
	TurnID      string     `json:"turnId"`
	QueueItemID string     `json:"queueItemId,omitempty"`
	Status      TurnStatus `json:"status,omitempty"`
	Reason      string     `json:"reason,omitempty"`
	// Code classifies the reason of a turn_finished for programs:
	// CodeOutputLimit when an output cap ended the turn.
	Code string `json:"code,omitempty"`
	// StartedAt is on turn_started and turn_finished, FinishedAt on
	// turn_finished: the turn's own start and end (MSG-5).
	StartedAt  *time.Time `json:"startedAt,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
}

// ToolStartedPayload is the payload of tool_started.
type ToolStartedPayload struct {
	TurnID     string `json:"turnId"`
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
}
