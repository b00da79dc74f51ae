package core

import (
	"context"
)

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
