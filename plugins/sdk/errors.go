package sdk

import (
	"fmt"
	"time"
)

// ErrorCategory classifies a provider failure. The host only compacts and
// retries on CategoryContextOverflow.
type ErrorCategory string

// Error categories.
const (
	CategoryContextOverflow ErrorCategory = "context_overflow"
	CategoryRateLimit       ErrorCategory = "rate_limit"
	CategoryQuota           ErrorCategory = "quota"
	CategoryThrottling      ErrorCategory = "throttling"
	CategoryOutputLimit     ErrorCategory = "output_limit"
	CategoryAuth            ErrorCategory = "auth"
	CategoryNetwork         ErrorCategory = "network"
	CategoryBadRequest      ErrorCategory = "bad_request"
	CategoryServer          ErrorCategory = "server"
	CategoryUnavailable     ErrorCategory = "unavailable"
	// CategoryBadResponse: the service answered with a well-formed event
	// or chunk the provider does not understand (an unexpected shape).
	// The same request would get the same answer, so it is never retried.
	CategoryBadResponse ErrorCategory = "bad_response"
)

// Error is a classified provider failure. Return it (possibly wrapped) from
// provider methods; an error of another type is reported as CategoryServer.
type Error struct {
	Category   ErrorCategory
	Message    string
	StatusCode int
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("%s (http %d): %s", e.Category, e.StatusCode, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Category, e.Message)
}

// Errorf builds an *Error.
func Errorf(c ErrorCategory, format string, args ...any) *Error {
	return &Error{Category: c, Message: fmt.Sprintf(format, args...)}
}
