package acp

import (
	"encoding/json"
	"strings"
)

// fallbackNotice is the agent text that tells the client a model call went
// to a fallback model (a route_fallback event): which model failed, why,
// and which model answers; "" for a payload that does not decode.
func fallbackNotice(payload json.RawMessage) string {
	var p struct {
		From, To struct{ Model string }
		Reason   string
	}
	if json.Unmarshal(payload, &p) != nil || p.To.Model == "" {
		return ""
	}
	return "\n\n_Model " + p.From.Model + " failed (" + strings.ReplaceAll(p.Reason, "_", " ") + "); answering with fallback " + p.To.Model + "._\n\n"
}
