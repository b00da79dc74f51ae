package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/foya-dev/foya/core"
)

func TestNeverSent(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&core.ProviderError{Category: core.ProviderNetwork, Message: "POST /chat/completions: Post \"http://127.0.0.1:1/v1/chat/completions\": dial tcp 127.0.0.1:1: connect: connection refused"}, true},
		{fmt.Errorf("turn: %w", &core.ProviderError{Category: core.ProviderNetwork, Message: "dial tcp: lookup nowhere.invalid: no such host"}), true},
		{&core.ProviderError{Category: core.ProviderNetwork, Message: "read stream: connection reset by peer"}, false},
		{&core.ProviderError{Category: core.ProviderNetwork, Message: "stream ended before [DONE]"}, false},
		{&core.ProviderError{Category: core.ProviderServer, StatusCode: 502, Message: "dial tcp upstream failed"}, false},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false}, // not a provider's report
		{nil, false},
	} {
		if got := neverSent(tc.err); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.err, got, tc.want)
		}
	}
}
