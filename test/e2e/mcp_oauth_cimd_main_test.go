package e2e

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// An authorization server that takes client ID metadata documents and
// offers no dynamic registration (test/oauth with CIMD=1: it reads the
// client_id URL over https and refuses a document that does not fit). A
// kernel started with --mcp-client-metadata-url signs in with that URL as
// its client_id; the document hosted there is the one the kernel serves
// on /mcp/oauth/client-metadata.json (relayed by an https server), which
// lists the kernel's callback. The tokens are refreshed and used like any
// grant's. A kernel without the flag, and one whose hosted document lists
// another callback, say what to do instead of sending the person to a
// page that refuses them.
func TestMCPOAuthClientMetadataDocument(t *testing.T) {
	t.Parallel()
	// The https host of the documents: /foya.json relays the kernel's own
	// document; /stale.json is a document listing another callback.
	var kernelAddr atomic.Value
	kernelAddr.Store("")
	docHost := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/foya.json":
			resp, err := plainHTTP().Get("http://" + kernelAddr.Load().(string) + core.MCPClientMetadataPath)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
			w.WriteHeader(resp.StatusCode)
			_, _ = io.Copy(w, resp.Body)
		case "/stale.json":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "https://" + r.Host + "/stale.json", "client_name": "Foya", "redirect_uris": []string{"http://127.0.0.1:1/mcp/oauth/callback"}, "token_endpoint_auth_method": "none"})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(docHost.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: docHost.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	as := startOAuthASEnv(t, 3600, "CIMD=1", "NODE_EXTRA_CA_CERTS="+ca)
	srv := startProtectedMCP(t, as)
	clientID := docHost.URL + "/foya.json"

	k := startKernelEnv(t, foyaBin, []string{"SSL_CERT_FILE=" + ca}, t.TempDir(), "--mcp-client-metadata-url", clientID)
	kernelAddr.Store(k.addr)
	// The kernel's document: public, its client_id URL and its callback.
	resp, err := plainHTTP().Get("http://" + k.addr + core.MCPClientMetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ClientID                string   `json:"client_id"`
		RedirectURIs            []string `json:"redirect_uris"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
		GrantTypes              []string `json:"grant_types"`
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || doc.ClientID != clientID ||
		len(doc.RedirectURIs) != 1 || doc.RedirectURIs[0] != "http://"+k.addr+"/mcp/oauth/callback" || doc.TokenEndpointAuthMethod != "none" || len(doc.GrantTypes) != 2 {
		t.Fatalf("document %d %v: %+v", resp.StatusCode, err, doc)
	}

	if resp, err := plainHTTP().Post("http://"+k.addr+core.MCPClientMetadataPath, "application/json", strings.NewReader("{}")); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST to the document: %v %v", resp, err)
	}

	var o outputs
	o.mustRun(t, "", "mcp", "add", "docs", "--addr", k.addr, "--url", srv.url, "--wait", "0")
	st, _ := waitMCPStatus(t, k, "docs", "NEEDS_AUTH")
	if st.AuthURL == nil {
		t.Fatalf("no sign-in: %+v", st)
	}
	u, _ := url.Parse(*st.AuthURL)
	if u.Query().Get("client_id") != clientID || u.Path != "/authorize" {
		t.Fatalf("authUrl %s", *st.AuthURL)
	}
	if code, page := followAuthURL(t, *st.AuthURL); code != 200 || !strings.Contains(page, "Signed in") {
		t.Fatalf("sign-in: %d %.300s (refused: %v)", code, page, as.stats(t).DocumentsRefused)
	}
	waitMCPStatus(t, k, "docs", "READY")
	stats := as.stats(t)
	if stats.DocumentsRead != 1 || stats.Registrations != 0 || stats.CodeExchanges != 1 || len(stats.ClientIDs) != 1 || stats.ClientIDs[0] != clientID {
		t.Fatalf("authorization server: %+v", stats)
	}
	fake := openaitest.New(t)
	sid := k.chatSession(t, fake.BaseURL())
	if msgs := k.runTools(t, fake, sid, toolCall("e1", "mcp__docs__echo", map[string]any{"text": "hi"})); msgs[0].IsError {
		t.Fatalf("the tool after the sign-in: %+v", msgs[0])
	}

	// Without the flag: no client, and the error says how to get one.
	bare := startKernel(t, t.TempDir())
	o.mustRun(t, "", "mcp", "add", "docs", "--addr", bare.addr, "--url", srv.url, "--wait", "0")
	st, _ = waitMCPStatus(t, bare, "docs", "NEEDS_AUTH")
	if st.AuthURL != nil || st.Error == nil || !strings.Contains(*st.Error, "--mcp-client-metadata-url") || !strings.Contains(*st.Error, "client ID metadata documents") {
		t.Fatalf("without a document: %+v", st)
	}
	if resp, err := plainHTTP().Get("http://" + bare.addr + core.MCPClientMetadataPath); err != nil || resp.StatusCode != 404 {
		t.Fatalf("a kernel without a document serves one: %v %v", resp, err)
	}

	// A hosted document that lists another callback: refused by the
	// kernel before any person is sent to the authorization server.
	stale := startKernelEnv(t, foyaBin, []string{"SSL_CERT_FILE=" + ca}, t.TempDir(), "--mcp-client-metadata-url", docHost.URL+"/stale.json")
	o.mustRun(t, "", "mcp", "add", "docs", "--addr", stale.addr, "--url", srv.url, "--wait", "0")
	st, _ = waitMCPStatus(t, stale, "docs", "NEEDS_AUTH")
	if st.AuthURL != nil || st.Error == nil || !strings.Contains(*st.Error, "does not list this kernel's callback") {
		t.Fatalf("stale document: %+v", st)
	}

	// The flag takes only an https URL with a path.
	for _, bad := range []string{"http://example.com/foya.json", "https://example.com", "https://example.com/", "https://example.com/a/../b.json"} {
		if r := o.run(t, "", "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--mcp-client-metadata-url", bad); r.code == 0 || !strings.Contains(r.stderr, "--mcp-client-metadata-url") {
			t.Fatalf("%s: exit %d %s", bad, r.code, r.stderr)
		}
	}
}
