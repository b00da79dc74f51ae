package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/foya-dev/foya/internal/testenv"
	"github.com/foya-dev/foya/plugins/mcphost/mcptest"
)

// oauthAS is the npm oauth2-mock-server (test/oauth/server.mjs) running as
// the authorization server of an MCP server.
type oauthAS struct {
	issuer string
}

type oauthStats struct {
	DocumentsRead    int      `json:"documentsRead"`
	DocumentsRefused []string `json:"documentsRefused"`
	ClientIDs        []string `json:"clientIds"`
	Registrations    int      `json:"registrations"`
	CodeExchanges    int      `json:"codeExchanges"`
	Refreshes        int      `json:"refreshes"`
	RefusedRefreshes int      `json:"refusedRefreshes"`
	Revocations      int      `json:"revocations"`
	Resources        []string `json:"resources"`
	Issued           []string `json:"issued"`
}

// startOAuthAS starts the authorization server with access tokens living
// ttl seconds; it skips (fails under CI=true) when node or test/oauth's
// node_modules are missing.
func startOAuthAS(t *testing.T, ttl int) *oauthAS {
	t.Helper()
	return startOAuthASEnv(t, ttl)
}

// startOAuthASEnv is startOAuthAS with env added to the server's
// environment (CIMD=1: client ID metadata documents instead of dynamic
// registration; NODE_EXTRA_CA_CERTS: a CA for the documents' https).
func startOAuthASEnv(t *testing.T, ttl int, env ...string) *oauthAS {
	t.Helper()
	dir := repoPath("test", "oauth")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "oauth2-mock-server", "package.json")); err != nil {
		testenv.Optional(t, "test/oauth/node_modules is missing (run npm ci in test/oauth, as .ci/run does)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Optional(t, "node is not installed")
	}
	cmd := exec.Command(node, "server.mjs")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), fmt.Sprintf("TOKEN_TTL=%d", ttl)), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("oauth2-mock-server did not start: %v", err)
	}
	var hello struct{ Issuer string }
	if err := json.Unmarshal([]byte(line), &hello); err != nil || hello.Issuer == "" {
		t.Fatalf("oauth2-mock-server said %q", line)
	}
	return &oauthAS{issuer: hello.Issuer}
}

func (a *oauthAS) stats(t *testing.T) oauthStats {
	t.Helper()
	resp, err := plainHTTP().Get(a.issuer + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s oauthStats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// plainHTTP is a client that carries no kernel token (a browser's view).
func plainHTTP() *http.Client {
	return &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
}

// protectedMCP is an MCP server (go-sdk, mcptest's tools) behind
// auth.RequireBearerToken: it takes only JWTs the authorization server
// signed (checked against its JWKS), unexpired, issued by it, for this
// resource (aud, from the resource indicator).
type protectedMCP struct {
	url string

	mu       sync.Mutex
	accepted map[string]bool // access tokens taken
	refused  int
}

func startProtectedMCP(t *testing.T, as *oauthAS) *protectedMCP {
	t.Helper()
	return startScopedMCP(t, as, nil)
}

// startScopedMCP is startProtectedMCP whose tools named in scopes need a
// token granted that scope: a call without it is answered 403 with a
// Bearer challenge error="insufficient_scope" naming the scope (the MCP
// authorization specification's scope challenge).
func startScopedMCP(t *testing.T, as *oauthAS, scopes map[string]string) *protectedMCP {
	t.Helper()
	p := &protectedMCP{accepted: map[string]bool{}}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.url = srv.URL + "/mcp"
	metaURL := srv.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: p.url, AuthorizationServers: []string{as.issuer}, BearerMethodsSupported: []string{"header"},
	}))
	server := mcptest.NewServer(nil, "")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	keys := &jwks{url: as.issuer + "/jwks"}
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		claims, err := keys.verify(ctx, token)
		if err == nil && claims.Iss != as.issuer {
			err = fmt.Errorf("issuer %q", claims.Iss)
		}
		if err == nil && claims.Aud != p.url {
			err = fmt.Errorf("audience %q, want the resource %q", claims.Aud, p.url)
		}
		if err == nil && time.Unix(claims.Exp, 0).Before(time.Now()) {
			err = errors.New("expired")
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			p.refused++
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		p.accepted[token] = true
		return &auth.TokenInfo{Expiration: time.Unix(claims.Exp, 0), UserID: "johndoe", Scopes: strings.Fields(claims.Scope)}, nil
	}
	gated := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(scopes) > 0 && r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string
				Params struct{ Name string }
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
				if need := scopes[msg.Params.Name]; need != "" {
					if ti := auth.TokenInfoFromContext(r.Context()); ti == nil || !slices.Contains(ti.Scopes, need) {
						w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`, need, metaURL))
						http.Error(w, "insufficient scope", http.StatusForbidden)
						return
					}
				}
			}
		}
		h.ServeHTTP(w, r)
	})
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metaURL})(gated))
	return p
}

func (p *protectedMCP) tokens() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for k := range p.accepted {
		out = append(out, k)
	}
	return out
}

type jwtClaims struct {
	Iss   string `json:"iss"`
	Aud   string `json:"aud"`
	Exp   int64  `json:"exp"`
	Scope string `json:"scope"`
}

// jwks verifies RS256 JWTs with the keys the authorization server
// publishes.
type jwks struct {
	url  string
	mu   sync.Mutex
	keys map[string]*rsa.PublicKey
}

func (j *jwks) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if k := j.keys[kid]; k != nil {
		return k, nil
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	resp, err := plainHTTP().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var set struct {
		Keys []struct{ Kid, Kty, N, E string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		return nil, err
	}
	j.keys = map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if k.Kty != "RSA" || err1 != nil || err2 != nil {
			continue
		}
		j.keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	}
	if k := j.keys[kid]; k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("no key %q in the JWKS", kid)
}

func (j *jwks) verify(ctx context.Context, token string) (jwtClaims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return jwtClaims{}, errors.New("not a JWT")
	}
	var hdr struct{ Alg, Kid string }
	var claims jwtClaims
	rawHdr, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	rawClaims, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return jwtClaims{}, err
	}
	if err := json.Unmarshal(rawHdr, &hdr); err != nil || hdr.Alg != "RS256" {
		return jwtClaims{}, fmt.Errorf("header %s", rawHdr)
	}
	key, err := j.key(ctx, hdr.Kid)
	if err != nil {
		return jwtClaims{}, err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig); err != nil {
		return jwtClaims{}, fmt.Errorf("signature: %w", err)
	}
	if err := json.Unmarshal(rawClaims, &claims); err != nil {
		return jwtClaims{}, err
	}
	return claims, nil
}

// followAuthURL is the browser: it opens the authorization URL without the
// kernel's token and follows the redirects to the kernel's callback page.
func followAuthURL(t *testing.T, authURL string) (int, string) {
	t.Helper()
	resp, err := plainHTTP().Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// mcpServerState is what the OAuth checks read of a server.
type mcpServerState struct {
	ID      string  `json:"id"`
	Status  string  `json:"status"`
	AuthURL *string `json:"authUrl"`
	Error   *string `json:"error"`
	Tools   []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// waitMCPStatus polls the kernel until the server named name has status.
func waitMCPStatus(t *testing.T, k *kernelProc, name, status string) (mcpServerState, string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var raw json.RawMessage
		k.gql(t, `{ mcpServers { id name status authUrl error tools { name } } }`, nil, &raw)
		var got struct {
			McpServers []struct {
				Name string `json:"name"`
				mcpServerState
			} `json:"mcpServers"`
		}
		_ = json.Unmarshal(raw, &got)
		for _, s := range got.McpServers {
			if s.Name == name && s.Status == status {
				return s.mcpServerState, string(raw)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("MCP server %s never became %s: %s\n%s", name, status, raw, k.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kernelEventStream subscribes to kernelEvents over SSE and sends each
// event as "type mcpServerId"; the func returns every data line so far.
func kernelEventStream(t *testing.T, k *kernelProc) (<-chan string, func() string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": `subscription { kernelEvents { type mcpServerId } }`})
	req, _ := http.NewRequest(http.MethodPost, k.url()+"/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	got := make(chan string, 256)
	raw := &strings.Builder{}
	var mu sync.Mutex
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				close(got)
				return
			}
			if data, ok := strings.CutPrefix(line, "data:"); ok {
				mu.Lock()
				raw.WriteString(data)
				mu.Unlock()
				var m struct {
					Data struct {
						KernelEvents struct {
							Type        string
							McpServerID string `json:"mcpServerId"`
						}
					}
				}
				if json.Unmarshal([]byte(strings.TrimSpace(data)), &m) == nil {
					select {
					case got <- m.Data.KernelEvents.Type + " " + m.Data.KernelEvents.McpServerID:
					default:
					}
				}
			}
		}
	}()
	time.Sleep(300 * time.Millisecond) // the subscription is registered
	return got, func() string {
		mu.Lock()
		defer mu.Unlock()
		return raw.String()
	}
}
