package openai

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/internal/httpwire"
)

// classify maps an HTTP status and error body to a category (PRV-12).
//
//   - 401/403 and authentication error types: auth
//   - insufficient_quota (any status): quota
//   - 429 otherwise: rate_limit
//   - context_length_exceeded or a "maximum context length" / "prompt is too
//     long" style message: context_overflow
//   - 529, 503 and any "overloaded" error: throttling (the service sheds
//     load; retry later with backoff, never compact)
//   - other 5xx: server; other 4xx: bad_request
//
// status 0 means an error object that arrived inside a 200 stream; its type
// and code decide.
func classify(status int, header http.Header, body []byte) *sdk.Error {
	var env struct {
		Error *apiError `json:"error"`
	}
	_ = json.Unmarshal(body, &env) // a non-JSON body is classified by status
	e := env.Error
	msg := ""
	if e != nil {
		msg = e.Message
	}
	if msg == "" {
		msg = httpwire.BodyMessage(status, body)
	}
	cat := category(status, e, msg)
	if code := e.code(); status == 0 && code != "" && !strings.Contains(msg, code) {
		msg += " [" + code + "]" // the service's code, kept for the reader
	}
	return &sdk.Error{Category: cat, Message: msg, StatusCode: status, RetryAfter: httpwire.RetryAfterMS(header)}
}

func category(status int, e *apiError, msg string) sdk.ErrorCategory {
	code, typ := e.code(), ""
	if e != nil {
		typ = e.Type
	}
	lower := strings.ToLower(msg + " " + typ + " " + code)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		typ == "authentication_error" || code == "invalid_api_key" || typ == "permission_error":
		return sdk.CategoryAuth
	case code == "insufficient_quota" || typ == "insufficient_quota":
		return sdk.CategoryQuota
	case status == http.StatusTooManyRequests || code == "rate_limit_exceeded" || typ == "rate_limit_error":
		return sdk.CategoryRateLimit
	case isContextOverflow(code, lower):
		return sdk.CategoryContextOverflow
	case status == 529 || status == http.StatusServiceUnavailable || strings.Contains(lower, "overloaded"):
		return sdk.CategoryThrottling
	case status >= 500 || typ == "server_error" || (status == 0 && typ != "invalid_request_error"):
		return sdk.CategoryServer
	default:
		return sdk.CategoryBadRequest
	}
}

var overflowPhrases = []string{
	"context_length_exceeded",
	"maximum context length",
	"context length",
	"context window",
	"prompt is too long",
	"input is too long",
	"too many input tokens",
	"reduce the length of the messages",
}

func isContextOverflow(code, lower string) bool {
	if code == "context_length_exceeded" {
		return true
	}
	for _, p := range overflowPhrases {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}

// networkError classifies a transport failure: dial, reset, EOF mid-stream.
func networkError(what string, err error) *sdk.Error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &sdk.Error{Category: sdk.CategoryNetwork, Message: what + ": connection closed before the response ended"}
	}
	return &sdk.Error{Category: sdk.CategoryNetwork, Message: what + ": " + err.Error()}
}
