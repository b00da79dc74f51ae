package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/foya-dev/foya/core"
)

func TestFallbackReason(t *testing.T) {
	for _, tc := range []struct {
		err    error
		reason string
		ok     bool
	}{
		{&core.ProviderError{Category: core.ProviderThrottling, StatusCode: 529}, FallbackOverloaded, true},
		{&core.ProviderError{Category: core.ProviderRateLimit, StatusCode: 429}, FallbackRateLimited, true},
		{&core.ProviderError{Category: core.ProviderQuota, StatusCode: 429}, FallbackQuota, true},
		{&core.ProviderError{Category: core.ProviderServer, StatusCode: 500}, FallbackServerError, true},
		{&core.ProviderError{Category: core.ProviderNetwork, Message: "connection reset by peer"}, FallbackNetwork, true},
		{&core.ProviderError{Category: core.ProviderAuth, StatusCode: 401}, FallbackAuth, true},
		{&core.ProviderError{Category: core.ProviderUnavailable}, FallbackUnavailable, true},
		{&core.ProviderError{Category: core.ProviderBadRequest, StatusCode: 404, Message: "Not Found"}, FallbackModelNotFound, true},
		{&core.ProviderError{Category: core.ProviderBadRequest, StatusCode: 400, Message: "The model `x` does not exist"}, FallbackModelNotFound, true},
		{&core.ProviderError{Category: core.ProviderBadRequest, Message: "model_not_found"}, FallbackModelNotFound, true},
		{fmt.Errorf("wrapped: %w", &core.ProviderError{Category: core.ProviderQuota}), FallbackQuota, true},
		// No other model does better: never falls back.
		{&core.ProviderError{Category: core.ProviderBadRequest, StatusCode: 400, Message: "Invalid value for 'temperature'"}, "", false},
		{&core.ProviderError{Category: core.ProviderContextOverflow, StatusCode: 400}, "", false},
		{&core.ProviderError{Category: core.ProviderOutputLimit}, "", false},
		{&core.ProviderError{Category: core.ProviderBadResponse}, "", false},
		{errors.New("not a provider error"), "", false},
		{nil, "", false},
	} {
		reason, ok := fallbackReason(tc.err)
		if reason != tc.reason || ok != tc.ok {
			t.Errorf("%v: got %q %v, want %q %v", tc.err, reason, ok, tc.reason, tc.ok)
		}
	}
	// Output already streamed: never repeated on another model.
	if noOutput(streamResult{err: errors.New("x"), text: "partial"}) || !noOutput(streamResult{err: errors.New("x")}) {
		t.Fatal("noOutput")
	}
}
