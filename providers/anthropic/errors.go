package anthropic

import (
	"cmp"
	"net/http"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/internal/httpwire"
)

// apiError is the error object of an error body or stream event:
// {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}.
type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// classify maps an HTTP error response to a category (PRV-12).
func classify(status int, header http.Header, body []byte) *sdk.Error {
	return httpwire.ClassifyBody(status, header, body, classifyAPIError, func(e *apiError) string { return e.Message })
}

// classifyAPIError classifies an error object; status 0 means it arrived
// as an error event inside a 200 stream.
//
//   - authentication_error, permission_error, 401, 403: auth
//   - billing_error, 402: quota
//   - rate_limit_error, 429: rate_limit (Retry-After kept)
//   - "prompt is too long", request_too_large, 413: context_overflow
//   - overloaded_error, 529, 503: throttling (retry later, never compact)
//   - api_error, other 5xx: server; other 4xx: bad_request
func classifyAPIError(status int, header http.Header, e *apiError) *sdk.Error {
	typ, msg := "", ""
	if e != nil {
		typ, msg = e.Type, e.Message
	}
	if msg == "" {
		msg = typ
	}
	lower := strings.ToLower(msg)
	var c sdk.ErrorCategory
	switch {
	case typ == "authentication_error" || typ == "permission_error" || status == http.StatusUnauthorized || status == http.StatusForbidden:
		c = sdk.CategoryAuth
	case typ == "billing_error" || status == http.StatusPaymentRequired:
		c = sdk.CategoryQuota
	case typ == "rate_limit_error" || status == http.StatusTooManyRequests:
		c = sdk.CategoryRateLimit
	case strings.Contains(lower, "prompt is too long") || strings.Contains(lower, "context window") ||
		strings.Contains(lower, "context length") || typ == "request_too_large" || status == http.StatusRequestEntityTooLarge:
		c = sdk.CategoryContextOverflow
	case typ == "overloaded_error" || status == 529 || status == http.StatusServiceUnavailable:
		c = sdk.CategoryThrottling
	case typ == "api_error" || status >= 500 || (status == 0 && typ != "invalid_request_error"):
		c = sdk.CategoryServer
	default:
		c = sdk.CategoryBadRequest
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	msg = cmp.Or(msg, "the service reported an error without a message")
	if status == 0 && typ != "" && !strings.Contains(msg, typ) {
		msg += " [" + typ + "]" // the service's error type, kept for the reader
	}
	return &sdk.Error{Category: c, Message: msg, StatusCode: status, RetryAfter: httpwire.RetryAfter(header)}
}
