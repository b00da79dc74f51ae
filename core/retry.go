package core

import ()

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
