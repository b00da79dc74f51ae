package core

import (
	"context"
	"encoding/json"
	"time"
)

// ApprovalDecision is a person's answer to an approval request.
type ApprovalDecision string

// Approval decisions.
const (
	ApprovalApproved           ApprovalDecision = "approved"
	ApprovalApprovedForSession ApprovalDecision = "approved_for_session"
	ApprovalDenied             ApprovalDecision = "denied"
	// ApprovalCancelled ends a request nobody decided before its turn
	// stopped; it appears only in approval_resolved and is never accepted
	// from a client.
	ApprovalCancelled ApprovalDecision = "cancelled"
)

// ApprovalPayload is the payload of approval_requested and approval_resolved.
type ApprovalPayload struct {
	RequestID  string           `json:"requestId"`
	ToolCallID string           `json:"toolCallId"`
	Tool       string           `json:"tool"`
	Action     string           `json:"action"`
	Summary    string           `json:"summary"`
	Input      json.RawMessage  `json:"input,omitempty"`
	Decision   ApprovalDecision `json:"decision,omitempty"`
	// ChildSessionID is set on the copy recorded in a parent session's log:
	// the request belongs to that sub-agent child session (SES-12).
	ChildSessionID string `json:"childSessionId,omitempty"`
}

// QuestionPayload is the payload of question_requested and question_answered.
type QuestionPayload struct {
	RequestID  string `json:"requestId"`
	ToolCallID string `json:"toolCallId"`
	Question   string `json:"question"`
	Answer     string `json:"answer,omitempty"`
	// Cancelled is set on the question_answered that ends a question nobody
	// answered before its turn stopped.
	Cancelled bool `json:"cancelled,omitempty"`
	// ChildSessionID: as on ApprovalPayload.
	ChildSessionID string `json:"childSessionId,omitempty"`
	// Elicitation is set when an MCP server asks (elicitation/create): its
	// fields or URL. Action (accept, decline or cancel) and Content (the
	// accepted fields) are set on its question_answered.
	Elicitation *Elicitation   `json:"elicitation,omitempty"`
	Action      string         `json:"action,omitempty"`
	Content     map[string]any `json:"content,omitempty"`
}

// CheckpointPayload is the payload of compaction_checkpoint: a portable
// text summary of the active history through ThroughSeq (PRV-8). It is used
// only while Digest matches the active messages it covers and Route matches
// the session's route; rewinds and route changes invalidate it.
type CheckpointPayload struct {
	ThroughSeq   int64  `json:"throughSeq"`
	Digest       string `json:"digest"`
	Route        string `json:"route"`
	Summary      string `json:"summary"`
	TokensBefore int64  `json:"tokensBefore"`
	TokensAfter  int64  `json:"tokensAfter"`
	Native       bool   `json:"native,omitempty"`
	// ProviderState is a native compactor's state (PRV-7): on the same
	// route it replaces the covered history in requests (ProviderRequest.State).
	// Never shown to clients.
	ProviderState *ProviderState `json:"providerState,omitempty"`
}

// CompactionStartedPayload is the payload of compaction_started.
type CompactionStartedPayload struct {
	// Reason is manual, auto (the budget's high-water mark) or overflow.
	Reason     string `json:"reason"`
	ThroughSeq int64  `json:"throughSeq"`
}

// NativeCompactor is the optional provider capability of compacting context
// natively (PRV-7). The runtime uses it when a provider declares
// CapNativeCompactor and falls back to the portable text checkpoint.
type NativeCompactor interface {
	CompactContext(ctx context.Context, ep Endpoint, req ProviderRequest) (Completion, error)
}

// QueueItem is user input waiting for the session's running turn to end.
type QueueItem struct {
	ID          string       `json:"id"`
	Input       UserInput    `json:"input"`
	Attachments []Attachment `json:"attachments,omitempty"`
	CreatedAt   time.Time    `json:"createdAt"`
	// Revision counts edits of this item.
	Revision int64 `json:"revision"`
	// TextBytes is the size of the whole text; set in queue_snapshot events.
	TextBytes int `json:"textBytes,omitempty"`
	// Truncated marks a queue_snapshot item that carries a preview (see
	// snapshotItem).
	Truncated bool `json:"truncated,omitempty"`
}

// QueuePayload is the payload of the live-only queue_snapshot event.
type QueuePayload struct {
	// Revision counts every change of the session's queue.
	Revision int64       `json:"revision"`
	Items    []QueueItem `json:"items"`
}

// SendResult says what sendMessage did with the input.
type SendResult struct {
	TurnStarted bool
	QueueItem   *QueueItem
}

// RetryPayload is the payload of the live-only retry_scheduled event.
type RetryPayload struct {
	TurnID string `json:"turnId"`
	// Attempt is the number of the request that will be sent after the wait
	// (2 for the first retry); MaxAttempts bounds it.
	Attempt     int                   `json:"attempt"`
	MaxAttempts int                   `json:"maxAttempts"`
	DelayMs     int64                 `json:"delayMs"`
	Category    ProviderErrorCategory `json:"category"`
	Reason      string                `json:"reason"`
	// RetryAfterMs is the provider's Retry-After, when it sent one.
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
}

// RouteFallbackPayload is the payload of route_fallback: the call on From
// failed with a class retries cannot fix (or still failed after its
// retries), and the same call went on To, the Attempt-th entry of the
// fallback chain. The session keeps its model: the next call tries it again.
type RouteFallbackPayload struct {
	TurnID string   `json:"turnId"`
	From   ModelRef `json:"from"`
	To     ModelRef `json:"to"`
	// Reason is the failure class: overloaded, rate_limited, quota,
	// server_error, network, model_not_found, auth or unavailable.
	Reason   string                `json:"reason"`
	Category ProviderErrorCategory `json:"category"`
	// Message is the provider's error, secrets scrubbed.
	Message string `json:"message"`
	Attempt int    `json:"attempt"`
}

// RewindFile is what a rewind does to one file.
type RewindFile struct {
	Path       string `json:"path"`
	Action     string `json:"action"`
	Restorable bool   `json:"restorable"`
	Reason     string `json:"reason,omitempty"`
	// Restored is set by confirm: the file was put back.
	Restored bool `json:"restored,omitempty"`

	// Target, Expected and Mode are the engine's restore plan; they are
	// never serialised.
	Target   string `json:"-"` // hash to restore ("" = absent)
	Expected string `json:"-"` // hash the session last left ("" = absent)
	Mode     uint32 `json:"-"` // recorded permission bits of the content to restore (0: not recorded)
}

// Guardian verdicts (the verdict field of guardian_verdict).
const (
	GuardianApprove  = "approve"
	GuardianDeny     = "deny"
	GuardianEscalate = "escalate"
)

// GuardianVerdictPayload is the payload of guardian_verdict: what the
// guardian model decided about one tool call of a GUARDED session, and why.
// Cause is "verdict" when the model answered with a verdict; otherwise the
// call escalated without one: "timeout", "error", "malformed" (the answer
// was not a verdict), "no_model" or "cap" (the per-turn limit of guardian
// calls was reached).
type GuardianVerdictPayload struct {
	ToolCallID   string `json:"toolCallId"`
	Tool         string `json:"tool"`
	Verdict      string `json:"verdict"`
	Reason       string `json:"reason"`
	Cause        string `json:"cause"`
	Model        string `json:"model,omitempty"`
	ConnectionID string `json:"connectionId,omitempty"`
}
