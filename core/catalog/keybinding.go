package catalog

import (
	"github.com/foya-dev/foya/core"
	"strings"
)

// connectionOrigin is where a connection's key is sent: its base URL's
// origin, or the provider kind's default endpoint when it has no base URL.
func connectionOrigin(c core.Connection) string {
	if strings.TrimSpace(c.BaseURL) == "" {
		return "the default endpoint of provider kind " + c.ProviderKind
	}
	return core.URLOrigin(c.BaseURL)
}

// keyBindingError keeps a stored key bound to the endpoint it was given
// for (issue 28): an update that moves a connection with a key to another
// origin (scheme, host or port) must give apiKey in the same update (a new
// key, an env:NAME reference, or "" for none). Otherwise BAD_INPUT, and the
// connection stays as it was, so no request carries the key to the new host.
func keyBindingError(before, after core.Connection, in core.ConnectionInput) error {
	if in.APIKey != nil || before.APIKey == "" {
		return nil
	}
	from, to := connectionOrigin(before), connectionOrigin(after)
	if from == to {
		return nil
	}
	return core.Errorf(core.CodeBadInput, "input.apiKey: required when baseUrl moves connection %q to another origin (%s → %s): a stored key is only sent to the endpoint it was given for; give apiKey in the same update (the key for the new endpoint, or env:NAME)", before.Name, from, to)
}
