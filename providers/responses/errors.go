package responses

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/internal/httpwire"
)

// apiError is an OpenAI error object: {"message","type","code","param"}.
// The code is a string in the Responses API (sometimes a number elsewhere).
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    string          `json:"-"`
	RawCode json.RawMessage `json:"code"`
}

func (e *apiError) code() string {
	if e == nil {
		return ""
	}
	if e.Code != "" {
		return e.Code
	}
	var s string
	if json.Unmarshal(e.RawCode, &s) == nil {
		return s
	}
	return strings.Trim(string(e.RawCode), `"`)
}

// classify maps an HTTP error response to a category (PRV-12).
func classify(status int, header http.Header, body []byte) *sdk.Error {
	return httpwire.ClassifyBody(status, header, body, classifyObject, func(e *apiError) string { return e.Message })
}

// classifyObject classifies an error object; status 0 means it arrived in a
// 200 stream (an error event or response.failed).
//
//   - 401/403, invalid_api_key, authentication errors: auth
//   - insufficient_quota: quota
//   - 429, rate_limit_exceeded: rate_limit (Retry-After / retry-after-ms kept)
//   - context_length_exceeded, "context window" messages: context_overflow
//   - 503, 529, server_is_overloaded, slow_down, "overloaded": throttling
//   - other 5xx and server_error: server; other 4xx: bad_request
func classifyObject(status int, header http.Header, e *apiError) *sdk.Error {
	code, typ, msg := e.code(), "", ""
	if e != nil {
		typ, msg = e.Type, e.Message
	}
	if msg == "" {
		msg = code
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	msg = cmp.Or(msg, "the service reported an error without a message")
	if status == 0 && code != "" && !strings.Contains(msg, code) {
		msg += " [" + code + "]" // the service's code, kept for the reader
	}
	lower := strings.ToLower(msg + " " + typ + " " + code)
	var c sdk.ErrorCategory
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden || code == "invalid_api_key" || typ == "authentication_error":
		c = sdk.CategoryAuth
	case code == "insufficient_quota" || typ == "insufficient_quota":
		c = sdk.CategoryQuota
	case status == http.StatusTooManyRequests || code == "rate_limit_exceeded":
		c = sdk.CategoryRateLimit
	case code == "context_length_exceeded" || strings.Contains(lower, "context window") || strings.Contains(lower, "maximum context length") || strings.Contains(lower, "input is too long"):
		c = sdk.CategoryContextOverflow
	case status == http.StatusServiceUnavailable || status == 529 || code == "server_is_overloaded" || code == "slow_down" || strings.Contains(lower, "overloaded"):
		c = sdk.CategoryThrottling
	case status >= 500 || code == "server_error" || typ == "server_error" || (status == 0 && typ != "invalid_request_error" && code != "invalid_prompt"):
		c = sdk.CategoryServer
	default:
		c = sdk.CategoryBadRequest
	}
	return &sdk.Error{Category: c, Message: msg, StatusCode: status, RetryAfter: httpwire.RetryAfterMS(header)}
}
