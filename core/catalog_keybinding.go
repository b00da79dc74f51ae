package core

import (
	"net"
	"net/url"
	"strings"
)

// URLOrigin is the origin of an http(s) URL: lowercase scheme and host and
// the port, the scheme's default when the URL gives none
// ("https://api.example.com:443"). A URL that does not parse is its own
// origin (compared as written).
func URLOrigin(raw string) string {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// connectionOrigin is where a connection's key is sent: its base URL's
// origin, or the provider kind's default endpoint when it has no base URL.
func connectionOrigin(c Connection) string {
	if strings.TrimSpace(c.BaseURL) == "" {
		return "the default endpoint of provider kind " + c.ProviderKind
	}
	return URLOrigin(c.BaseURL)
}

// keyBindingError keeps a stored key bound to the endpoint it was given
// for (issue 28): an update that moves a connection with a key to another
// origin (scheme, host or port) must give apiKey in the same update (a new
// key, an env:NAME reference, or "" for none). Otherwise BAD_INPUT, and the
// connection stays as it was, so no request carries the key to the new host.
func keyBindingError(before, after Connection, in ConnectionInput) error {
	if in.APIKey != nil || before.APIKey == "" {
		return nil
	}
	from, to := connectionOrigin(before), connectionOrigin(after)
	if from == to {
		return nil
	}
	return Errorf(CodeBadInput, "input.apiKey: required when baseUrl moves connection %q to another origin (%s → %s): a stored key is only sent to the endpoint it was given for; give apiKey in the same update (the key for the new endpoint, or env:NAME)", before.Name, from, to)
}

// mcpHeaderBindingError keeps an HTTP MCP server's headers (secrets: their
// values are never returned) bound to the origin they were given for: an
// update that moves the URL to another scheme, host or port must give
// headers again in the same update ([] for none). Otherwise BAD_INPUT, and
// the server stays as it was.
func mcpHeaderBindingError(before, after MCPServerConfig, in MCPServerInput) error {
	if in.Headers != nil || len(before.Headers) == 0 || before.Transport != MCPHTTP || after.Transport != MCPHTTP {
		return nil
	}
	from, to := URLOrigin(before.URL), URLOrigin(after.URL)
	if from == to {
		return nil
	}
	return Errorf(CodeBadInput, "input.headers: required when url moves MCP server %q to another origin (%s → %s): its headers are secrets sent only to the server they were given for; give headers again in the same update ([] for none)", before.Name, from, to)
}
