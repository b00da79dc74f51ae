package host

import (
	"context"
	"fmt"

	"github.com/foya-dev/foya/core"
	foyav1 "github.com/foya-dev/foya/plugins/proto/foya/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// isTransportFailure reports whether err means the plugin connection is
// broken (the process died or the socket closed), as opposed to an answer.
func isTransportFailure(err error) bool {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unavailable {
		return false
	}
	for _, d := range st.Details() {
		if _, ok := d.(*foyav1.ProviderError); ok {
			return false
		}
	}
	return true
}

// mapError turns a gRPC error from plugin name into a core error. A
// ProviderError detail becomes a PROVIDER_ERROR (or UNAVAILABLE) *core.Error
// wrapping a *core.ProviderError; transport failures become UNAVAILABLE.
func mapError(name string, err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("plugin %s: %w", name, err)
	}
	for _, d := range st.Details() {
		if pe, ok := d.(*foyav1.ProviderError); ok {
			return providerError(name, providerErrorFromProto(pe))
		}
	}
	switch st.Code() {
	case codes.Canceled:
		return fmt.Errorf("plugin %s: %w", name, context.Canceled)
	case codes.DeadlineExceeded:
		return fmt.Errorf("plugin %s: %w", name, context.DeadlineExceeded)
	case codes.Unavailable:
		return &core.Error{Code: core.CodeUnavailable, Message: fmt.Sprintf("plugin %s is unavailable", name), Err: err}
	case codes.Unimplemented:
		return &core.Error{Code: core.CodeUnavailable, Message: fmt.Sprintf("plugin %s: %s", name, st.Message()), Err: err}
	case codes.InvalidArgument, codes.OutOfRange, codes.FailedPrecondition:
		return &core.Error{Code: core.CodeBadInput, Message: fmt.Sprintf("plugin %s: %s", name, st.Message()), Err: err}
	case codes.NotFound:
		return &core.Error{Code: core.CodeNotFound, Message: fmt.Sprintf("plugin %s: %s", name, st.Message()), Err: err}
	case codes.Unauthenticated, codes.PermissionDenied:
		return &core.Error{Code: core.CodeUnauthenticated, Message: fmt.Sprintf("plugin %s: %s", name, st.Message()), Err: err}
	}
	return &core.Error{Code: core.CodeInternal, Message: fmt.Sprintf("plugin %s failed: %s", name, st.Message()), Err: err}
}

func providerError(name string, pe *core.ProviderError) *core.Error {
	code := core.CodeProviderError
	if pe.Category == core.ProviderUnavailable {
		code = core.CodeUnavailable
	}
	return &core.Error{Code: code, Message: fmt.Sprintf("provider %s: %s", name, pe.Message), Err: pe}
}
