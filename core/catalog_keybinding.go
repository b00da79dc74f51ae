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
