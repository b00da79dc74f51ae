package catalog

import (
	"context"
	"errors"
	"fmt"
	"github.com/foya-dev/foya/core"
	"maps"
	"os"
	"strings"
)

// APIKeyConfigured reports whether conn has an API key (literal or env:
// reference). It is what clients see instead of the key (PRV-14).
func APIKeyConfigured(conn core.Connection) bool { return conn.APIKey != "" }

// Endpoint returns what a provider call needs for connection id, with the
// API key resolved: a key written "env:NAME" is read from the kernel's
// environment now, so a changed variable applies to the next call. An unset
// or empty variable gives an error matching ErrUnavailable that names the
// variable (never a value).
func (c *Catalog) Endpoint(ctx context.Context, connectionID string) (core.Endpoint, error) {
	c.syncQuiet(ctx)
	c.mu.Lock()
	conn, ok := findConnection(c.data, connectionID)
	c.mu.Unlock()
	if !ok {
		return core.Endpoint{}, notFoundConnection(connectionID)
	}
	return endpointOf(conn, c.keyEnvs)
}

func endpointOf(conn core.Connection, envs keyEnvPolicy) (core.Endpoint, error) {
	key, err := resolveAPIKey(conn, envs)
	if err != nil {
		return core.Endpoint{}, err
	}
	return core.Endpoint{ConnectionID: conn.ID, ProviderKind: conn.ProviderKind, BaseURL: conn.BaseURL, APIKey: key, Options: maps.Clone(conn.Options)}, nil
}

// resolveAPIKey returns the key of conn. An env: reference that the key-env
// rule does not allow (a connection stored before the rule, or by a kernel
// started with other --allow-key-env names) is never read.
func resolveAPIKey(conn core.Connection, envs keyEnvPolicy) (string, error) {
	name, ok := strings.CutPrefix(conn.APIKey, core.EnvKeyPrefix)
	if !ok {
		return conn.APIKey, nil
	}
	if !envs.allows(name) {
		return "", core.Errorf(core.CodeUnavailable, "the API key of connection %q names environment variable %s, which is not read: %s; update the connection or restart the kernel with --allow-key-env %s", conn.Name, name, KeyEnvRule, name)
	}
	v, _ := os.LookupEnv(name)
	if strings.TrimSpace(v) == "" {
		return "", core.Errorf(core.CodeUnavailable, "the API key of connection %q comes from environment variable %s, which is not set or empty in the kernel's environment", conn.Name, name)
	}
	return strings.TrimSpace(v), nil
}

// ProviderFailure wraps a provider error for clients with the key scrubbed
// from its message.
func ProviderFailure(what string, err error, key string) error {
	var de *core.Error
	if errors.As(err, &de) && de.Code == core.CodeUnavailable {
		return &core.Error{Code: core.CodeUnavailable, Message: what + ": " + core.ScrubSecret(de.Message, key), Err: err}
	}
	var pe *core.ProviderError
	if errors.As(err, &pe) {
		return &core.Error{Code: core.CodeProviderError, Message: fmt.Sprintf("%s: %s: %s", what, pe.Category, core.ScrubSecret(pe.Message, key)), Err: err}
	}
	return &core.Error{Code: core.CodeProviderError, Message: what + " failed; see the kernel log", Err: err}
}
