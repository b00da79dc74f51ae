package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/foya-dev/foya/core"
)

// internalError marks a resolver error that is not a domain error: it is
// logged and shown only as INTERNAL.
type internalError struct{ err error }

func (e internalError) Error() string { return e.err.Error() }
func (e internalError) Unwrap() error { return e.err }

// MarkInternal (a field middleware) tags every non-domain error a resolver
// returns, so that the presenter can tell them from gqlgen's own input
// errors.
func MarkInternal(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if err == nil {
		return res, nil
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return res, err
	}
	var ie internalError
	if errors.As(err, &ie) {
		return res, err
	}
	return res, internalError{err}
}

// PresentError is the error presenter: a core error keeps its code and a
// clipped message, any other resolver error (MarkInternal) is logged and
// shown only as INTERNAL, and gqlgen's own input errors are clipped and
// coded BAD_INPUT.
func PresentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		if gqlErr.Extensions == nil {
			gqlErr.Extensions = map[string]any{}
		}
		if errors.Is(err, errResponseTooLarge) {
			return responseTooLarge // replaced by ResponseCap with one error
		}
		var ce *core.Error
		var ie internalError
		switch {
		case errors.As(err, &ce):
			gqlErr.Message = ClipKernelMessage(ce.Message)
			gqlErr.Extensions["code"] = string(ce.Code)
			if ce.Code == core.CodeInternal {
				log.Error("internal error", "path", gqlErr.Path.String(), "err", err)
			}
		case errors.As(err, &ie):
			if errors.Is(err, context.Canceled) {
				gqlErr.Message = "request cancelled"
				gqlErr.Extensions["code"] = string(core.CodeUnavailable)
				break
			}
			log.Error("internal error", "path", gqlErr.Path.String(), "err", err)
			gqlErr.Message = "internal error; see the kernel log"
			gqlErr.Extensions["code"] = string(core.CodeInternal)
		default:
			// gqlgen's own parse, validation and argument errors: the
			// client's input, which the message must not repeat at length.
			gqlErr.Message = ClipMessage(gqlErr.Message)
			if c, _ := gqlErr.Extensions["code"].(string); !KnownCode(c) {
				gqlErr.Extensions["code"] = string(core.CodeBadInput)
			}
		}
		return gqlErr
	}
}

// Recover turns a panic in a resolver into an INTERNAL error, logging the
// panic and its stack.
func Recover(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, v any) error {
		log.Error("panic in resolver", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		return internalError{fmt.Errorf("panic: %v", v)}
	}
}

// KnownCode reports whether c is one of the documented extensions.code values.
func KnownCode(c string) bool {
	switch core.Code(c) {
	case core.CodeBadInput, core.CodeNotFound, core.CodeConflict, core.CodeUnavailable,
		core.CodeProviderError, core.CodeUnauthenticated, core.CodeInternal, core.CodeRateLimited:
		return true
	}
	return false
}
