package core

import (
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
)

// String describes the connection without its API key; fmt's %v and %+v use
// it, also for connections nested in slices and structs.
func (c Connection) String() string {
	return fmt.Sprintf("connection(id=%s name=%q type=%s provider=%s baseUrl=%s auth=%s apiKey=%s models=%d order=%d)",
		c.ID, c.Name, c.Type, c.ProviderKind, RedactURL(c.BaseURL), c.AuthKind,
		keyState(c.APIKey), len(c.Models), c.Order)
}

// GoString keeps %#v from printing the key.
func (c Connection) GoString() string { return "core." + c.String() }

// LogValue makes slog log the connection without its API key.
func (c Connection) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("connection_id", c.ID),
		slog.String("name", c.Name),
		slog.String("type", string(c.Type)),
		slog.String("provider_kind", c.ProviderKind),
		slog.String("base_url", RedactURL(c.BaseURL)),
		slog.String("auth_kind", string(c.AuthKind)),
		slog.String("api_key", keyState(c.APIKey)),
		slog.Int("models", len(c.Models)),
		slog.Int("order", c.Order),
	)
}

// String describes the input without its API key.
func (in ConnectionInput) String() string {
	key := "keep"
	if in.APIKey != nil {
		key = keyState(*in.APIKey)
	}
	return fmt.Sprintf("connectionInput(name=%q type=%s provider=%s baseUrl=%s auth=%s apiKey=%s models=%d)",
		in.Name, in.Type, in.ProviderKind, RedactURL(in.BaseURL), in.AuthKind, key, len(in.Models))
}

// GoString keeps %#v from printing the key.
func (in ConnectionInput) GoString() string { return "core." + in.String() }

// LogValue makes slog log the input without its API key.
func (in ConnectionInput) LogValue() slog.Value { return slog.StringValue(in.String()) }

// String describes the catalog without any API key.
func (d CatalogData) String() string {
	return fmt.Sprintf("catalog(connections=%v defaults=%+v)", d.Connections, d.Defaults)
}

// GoString keeps %#v from printing keys.
func (d CatalogData) GoString() string { return d.String() }

// keyState says how a key is configured without showing it.
func keyState(key string) string {
	switch {
	case key == "":
		return "none"
	case strings.HasPrefix(key, EnvKeyPrefix):
		return "env:" + strings.TrimPrefix(key, EnvKeyPrefix) // a variable name is not secret
	default:
		return "[redacted]"
	}
}

// RedactURL drops credentials embedded in a URL (validation rejects them, but
// a hand-edited file may still hold some).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.Contains(raw, "@") {
			return "[unparseable url redacted]"
		}
		return raw
	}
	if u.User != nil {
		u.User = url.User("redacted")
	}
	return u.String()
}

// ScrubSecret removes secret from a text that came from elsewhere (a
// provider's error message may echo the key it was sent, sometimes upper- or
// lower-cased), matching it case-insensitively.
func ScrubSecret(text, secret string) string {
	if secret == "" {
		return text
	}
	re, err := regexp.Compile("(?i)" + regexp.QuoteMeta(secret))
	if err != nil { // QuoteMeta output always compiles
		return strings.ReplaceAll(text, secret, "[redacted]")
	}
	return re.ReplaceAllLiteralString(text, "[redacted]")
}
