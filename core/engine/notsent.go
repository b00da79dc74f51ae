package engine

import (
	"errors"
	"strings"

	"github.com/foya-dev/foya/core"
)

// neverSent reports whether a failed request never reached the provider: its
// connection could not be opened (refused, no route, unknown host), so not a
// byte of it was sent and nothing may be billed or estimated for it. Provider
// plugins report transport failures as ProviderNetwork errors whose message
// carries Go's net error, and every dial failure reads "dial <network> …".
func neverSent(err error) bool {
	var perr *core.ProviderError
	if !errors.As(err, &perr) || perr.Category != core.ProviderNetwork || perr.StatusCode != 0 {
		return false
	}
	return strings.Contains(perr.Message, "dial tcp") || strings.Contains(perr.Message, "dial udp") || strings.Contains(perr.Message, "dial unix")
}
