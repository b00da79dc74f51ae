package core

import (
	"errors"
	"fmt"
	"testing"
)

func TestNeverSent(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&ProviderError{Category: ProviderNetwork, Message: "POST /chat/completions: Post \"http://127.0.0.1:1/v1/chat/completions\": dial tcp 127.0.0.1:1: connect: connection refused"}, true},
		{fmt.Errorf("turn: %w", &ProviderError{Category: ProviderNetwork, Message: "dial tcp: lookup nowhere.invalid: no such host"}), true},
		{&ProviderError{Category: ProviderNetwork, Message: "read stream: connection reset by peer"}, false},
		{&ProviderError{Category: ProviderNetwork, Message: "stream ended before [DONE]"}, false},
		{&ProviderError{Category: ProviderServer, StatusCode: 502, Message: "dial tcp upstream failed"}, false},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false}, // not a provider's report
		{nil, false},
	} {
		if got := neverSent(tc.err); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.err, got, tc.want)
		}
	}
}
