package core

import (
	"errors"
	"fmt"
)

// Code classifies an error for clients. The GraphQL edge maps it to
// extensions.code and the plugin edge to a gRPC status; nothing else looks at it.
type Code string

// The fixed set of error codes of the public API.
const (
	CodeBadInput        Code = "BAD_INPUT"
	CodeNotFound        Code = "NOT_FOUND"
	CodeConflict        Code = "CONFLICT"
	CodeUnavailable     Code = "UNAVAILABLE"
	CodeProviderError   Code = "PROVIDER_ERROR"
	CodeUnauthenticated Code = "UNAUTHENTICATED"
	CodeInternal        Code = "INTERNAL"
	// CodeRateLimited: the kernel refused the request for now (too many in
	// flight from this peer, or too many expensive ones); retry after the
	// Retry-After the HTTP answer carries.
	CodeRateLimited Code = "RATE_LIMITED"
)

// Error is a domain error with a code and a message a person can act on.
// Anything that is not an *Error reaching the edge is INTERNAL and is logged,
// never shown.
type Error struct {
	Code    Code
	Message string
	// Err is an optional cause, kept for logs and errors.Is; it is never shown.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotFound) match any *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Sentinels for errors.Is; they match any *Error of their code.
var (
	ErrBadInput    = &Error{Code: CodeBadInput}
	ErrNotFound    = &Error{Code: CodeNotFound}
	ErrConflict    = &Error{Code: CodeConflict}
	ErrUnavailable = &Error{Code: CodeUnavailable}
)

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, or CodeInternal when err carries none.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorMessage returns the client-facing message of err: the domain message
// for an *Error, a generic text otherwise (internal details stay in logs).
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return "internal error; see the kernel log"
}
