package mcphost

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/foya-dev/foya/core"
)

// Client ID metadata documents (draft-ietf-oauth-client-id-metadata-
// document, the MCP authorization specification's preferred client
// registration): the kernel's client_id is an https URL where a JSON
// document describes it; an authorization server that takes such
// documents fetches it instead of registering the client.

// ClientMetadata is the document the kernel's client_id URL serves.
type ClientMetadata struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	SoftwareID              string   `json:"software_id,omitempty"`
	SoftwareVersion         string   `json:"software_version,omitempty"`
}

// ClientMetadataDocument is the document for the client_id clientID whose
// sign-ins come back to one of redirects (the kernels of a cluster each
// have their own callback): a public client (PKCE, no secret) with the
// authorization code and refresh token grants.
func ClientMetadataDocument(clientID string, redirects []string, version string) ClientMetadata {
	return ClientMetadata{
		ClientID: clientID, ClientName: "Foya", RedirectURIs: redirects,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: "none", SoftwareID: "foya", SoftwareVersion: version,
	}
}

// ValidateClientMetadataURL checks a client_id URL: https, with a path
// other than "/", no fragment, no user info, no dot segments (the draft's
// rules for a client identifier).
func ValidateClientMetadataURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	switch {
	case u.Scheme != "https":
		return fmt.Errorf("%q is not an https URL", raw)
	case u.Host == "":
		return fmt.Errorf("%q has no host", raw)
	case u.Path == "" || u.Path == "/":
		return fmt.Errorf("%q has no path (the document needs one of its own)", raw)
	case u.Fragment != "" || u.User != nil:
		return fmt.Errorf("%q must have no fragment and no user info", raw)
	case strings.Contains(u.Path+"/", "/./") || strings.Contains(u.Path+"/", "/../"):
		return fmt.Errorf("%q must have no . or .. path segments", raw)
	}
	return nil
}

const (
	// cimdRecheck is how long a document found to list a callback is
	// trusted before it is read again.
	cimdRecheck = 5 * time.Minute
	// maxClientMetadata bounds the document read (the draft suggests
	// 5 KiB; some documents carry logos' URLs and contacts).
	maxClientMetadata = 64 << 10
)

// checkClientMetadata reads the document at clientID and refuses a
// document that does not describe this kernel: its client_id must be the
// URL and its redirect_uris must hold redirect, or the authorization
// server would refuse the sign-in on a page only the person sees. A
// document the kernel cannot reach is not refused (the authorization
// server may reach it where the kernel does not); that is logged.
func (m *Manager) checkClientMetadata(ctx context.Context, clientID, redirect string, hc *http.Client) error {
	m.mu.Lock()
	at, ok := m.cimdChecked[redirect]
	m.mu.Unlock()
	if ok && time.Since(at) < cimdRecheck {
		return nil
	}
	doc, reachable, err := fetchClientMetadata(ctx, clientID, hc)
	if !reachable {
		m.log.Warn("the client ID metadata document could not be read; signing in with it anyway", "url", clientID, "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case doc.ClientID != clientID:
		return fmt.Errorf("the client ID metadata document at %s names client_id %q, not its own URL", clientID, core.Clip(doc.ClientID, 200))
	case !slices.Contains(doc.RedirectURIs, redirect):
		return fmt.Errorf("the client ID metadata document at %s does not list this kernel's callback %s in redirect_uris (serve the kernel's GET %s there)", clientID, redirect, core.MCPClientMetadataPath)
	}
	m.mu.Lock()
	m.cimdChecked[redirect] = time.Now()
	m.mu.Unlock()
	return nil
}

// fetchClientMetadata GETs the document. reachable is false when no
// answer came (network) or the host failed (5xx).
func fetchClientMetadata(ctx context.Context, clientID string, hc *http.Client) (doc ClientMetadata, reachable bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, oauthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientID, nil)
	if err != nil {
		return doc, false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return doc, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 {
		return doc, false, fmt.Errorf("status %d", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return doc, true, fmt.Errorf("the client ID metadata document at %s answers %d", clientID, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxClientMetadata+1))
	if err != nil {
		return doc, false, err
	}
	if len(body) > maxClientMetadata {
		return doc, true, fmt.Errorf("the client ID metadata document at %s is larger than %d bytes", clientID, maxClientMetadata)
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return doc, true, fmt.Errorf("the client ID metadata document at %s is not JSON: %w", clientID, err)
	}
	return doc, true, nil
}
