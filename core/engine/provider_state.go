package engine

import (
	"log/slog"

	"github.com/foya-dev/foya/core"
)

// MaxProviderState bounds the native state kept with one reply or
// checkpoint; larger state (a misbehaving plugin) is dropped with a warning
// and the history goes back as plain messages.
const MaxProviderState = 8 << 20

// newProviderState returns the state to persist for route, or nil when
// there is none or it is too large.
func newProviderState(log *slog.Logger, sessionID, route string, data []byte) *core.ProviderState {
	if len(data) == 0 {
		return nil
	}
	if len(data) > MaxProviderState {
		log.Warn("provider-native state too large; not kept", "session_id", sessionID, "bytes", len(data), "max", MaxProviderState)
		return nil
	}
	return &core.ProviderState{Route: route, Data: data}
}
