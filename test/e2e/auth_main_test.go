package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// authClient speaks to a kernel over every transport with a given token.
type authClient struct {
	base  string // http(s)://host:port
	http  *http.Client
	token string
}

// post sends a query (SSE when sse) and returns the status and body (for
// SSE: the response, still open). The auth tests send raw documents
// through it: what is checked is the refusal or the answer of the HTTP
// edge to a request with a given token, not the operation.
func (c authClient) post(t *testing.T, query string, sse bool) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest(http.MethodPost, c.base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if sse {
		req.Header.Set("Accept", "text/event-stream")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// mustRefuse checks a 401 whose body is a GraphQL error coded UNAUTHENTICATED.
func mustRefuse(t *testing.T, resp *http.Response, what string) {
	t.Helper()
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r struct {
		Errors []struct {
			Message    string
			Extensions struct{ Code string }
		}
	}
	if resp.StatusCode != http.StatusUnauthorized || json.Unmarshal(raw, &r) != nil || len(r.Errors) == 0 || r.Errors[0].Extensions.Code != "UNAUTHENTICATED" || r.Errors[0].Message == "" {
		t.Fatalf("%s: want 401 UNAUTHENTICATED, got %d %s", what, resp.StatusCode, raw)
	}
}

func mustData(t *testing.T, resp *http.Response, what string) {
	t.Helper()
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r struct {
		Data   map[string]any
		Errors []json.RawMessage
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &r) != nil || len(r.Errors) > 0 || r.Data == nil {
		t.Fatalf("%s: %d %s", what, resp.StatusCode, raw)
	}
}

// wsInit dials, sends connection_init with payload and returns the socket
// once acknowledged, or the close error.
func (c authClient) wsInit(ctx context.Context, t *testing.T, header http.Header, payload any) (*websocket.Conn, error) {
	t.Helper()
	url := "ws" + strings.TrimPrefix(c.base, "http") + "/graphql"
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPClient: c.http, HTTPHeader: header})
	if err != nil {
		if resp != nil {
			return nil, &httpStatusError{resp}
		}
		t.Fatalf("dial %s: %v", url, err)
	}
	if err := wsjson.Write(ctx, conn, map[string]any{"type": "connection_init", "payload": payload}); err != nil {
		t.Fatal(err)
	}
	for {
		var m struct{ Type string }
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			conn.CloseNow()
			return nil, err
		}
		if m.Type == "connection_ack" {
			return conn, nil
		}
	}
}

type httpStatusError struct{ resp *http.Response }

func (e *httpStatusError) Error() string { return e.resp.Status }

// wsSubscribe starts kernelEvents (a stream that stays open) on an
// acknowledged socket and checks that it is accepted by running a query
// subscription-free ping: the socket answers pings until it closes.
func wsSubscribe(ctx context.Context, t *testing.T, conn *websocket.Conn) {
	t.Helper()
	// Raw: the protocol messages are written by hand on a socket whose
	// handshake the test controls.
	if err := wsjson.Write(ctx, conn, map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": `subscription { kernelEvents { type } }`}}); err != nil {
		t.Fatal(err)
	}
	if err := wsjson.Write(ctx, conn, map[string]any{"type": "ping"}); err != nil {
		t.Fatal(err)
	}
	for {
		var m struct {
			Type    string
			Payload json.RawMessage
		}
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			t.Fatalf("subscription: %v", err)
		}
		switch m.Type {
		case "pong":
			return
		case "error", "complete":
			t.Fatalf("subscription refused: %s %s", m.Type, m.Payload)
		}
	}
}

func mustCloseCode(t *testing.T, err error, code websocket.StatusCode, what string) {
	t.Helper()
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != code || !strings.HasPrefix(ce.Reason, "UNAUTHENTICATED") {
		t.Fatalf("%s: want close %d with an UNAUTHENTICATED reason, got %v", what, code, err)
	}
}

// portOf is the port of a "host:port" the kernel logged.
func portOf(t *testing.T, addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// Beyond loopback every transport needs the token, for every peer; the
// token file is private and never logged; rotation takes effect on the
// running kernel and closes streams opened with the old token.
func TestServeRequiresTokenBeyondLoopback(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	k := startKernel(t, data, "--addr", "0.0.0.0:0")
	base := "http://127.0.0.1:" + portOf(t, k.addr)
	tokPath := filepath.Join(data, "auth-token")
	fi, err := os.Stat(tokPath)
	if err != nil {
		t.Fatalf("no token file: %v\n%s", err, k.Logs())
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v", fi.Mode().Perm())
	}
	raw, _ := os.ReadFile(tokPath)
	token := strings.TrimSpace(string(raw))
	if len(token) != 43 {
		t.Fatalf("token %d characters, want 43 (256 bits base64url)", len(token))
	}
	logs := k.Logs()
	if !strings.Contains(logs, tokPath) || strings.Contains(logs, token) {
		t.Fatalf("the log must name the token file and never the token:\n%s", logs)
	}
	if strings.Count(logs, "without TLS") != 1 {
		t.Fatalf("want one warning about listening beyond loopback without TLS:\n%s", logs)
	}

	hc := &http.Client{Timeout: time.Minute} // bounds the SSE read below
	none, wrong, right := authClient{base, hc, ""}, authClient{base, hc, strings.Repeat("x", 43)}, authClient{base, hc, token}
	// Raw documents: the auth checks send them with and without tokens
	// over POST, SSE and WebSocket and read the refusals as they are.
	const q = `{ sessions { id } }`
	const sub = `subscription { kernelEvents { type } }`
	// POST.
	mustRefuse(t, none.post(t, q, false), "POST without token")
	mustRefuse(t, wrong.post(t, q, false), "POST with a wrong token")
	mustData(t, right.post(t, q, false), "POST with the token")
	// SSE.
	mustRefuse(t, none.post(t, sub, true), "SSE without token")
	mustRefuse(t, wrong.post(t, sub, true), "SSE with a wrong token")
	{ // A fake Upgrade header does not skip the check (SSE would take this POST).
		body, _ := json.Marshal(map[string]any{"query": sub})
		req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Upgrade", "websocket")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		mustRefuse(t, resp, "SSE with an Upgrade header and no token")
	}
	sse := right.post(t, sub, true)
	defer sse.Body.Close()
	if sse.StatusCode != http.StatusOK || !strings.Contains(sse.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("SSE with the token: %d %s", sse.StatusCode, sse.Header.Get("Content-Type"))
	}
	// WebSocket: the token in connection_init (or on the upgrade).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = none.wsInit(ctx, t, nil, map[string]any{})
	mustCloseCode(t, err, 4403, "WebSocket init without token")
	_, err = none.wsInit(ctx, t, nil, map[string]any{"authorization": "Bearer " + wrong.token})
	mustCloseCode(t, err, 4403, "WebSocket init with a wrong token")
	_, err = none.wsInit(ctx, t, http.Header{"Authorization": {"Bearer " + wrong.token}}, map[string]any{})
	var se *httpStatusError
	if !errors.As(err, &se) {
		t.Fatalf("upgrade with a wrong Authorization header: %v", err)
	}
	mustRefuse(t, se.resp, "upgrade with a wrong Authorization header")
	hdrConn, err := none.wsInit(ctx, t, http.Header{"Authorization": {"Bearer " + token}}, map[string]any{})
	if err != nil {
		t.Fatalf("upgrade with the token: %v", err)
	}
	defer hdrConn.CloseNow()
	wsSubscribe(ctx, t, hdrConn)
	conn, err := none.wsInit(ctx, t, nil, map[string]any{"authorization": "Bearer " + token})
	if err != nil {
		t.Fatalf("WebSocket init with the token: %v\n%s", err, k.Logs())
	}
	defer conn.CloseNow()
	wsSubscribe(ctx, t, conn)
	// Failed attempts are logged with the peer address.
	k.waitLog(t, `msg="authentication failed" peer=127.0.0.1:`)
	k.waitLog(t, `via="websocket connection_init"`)

	// The CLI finds the token in the data directory, or FOYA_TOKEN.
	cli := exec.Command(foyaBin, "sessions", "list", "--addr", "127.0.0.1:"+portOf(t, k.addr), "--data-dir", data)
	cli.Env = append(os.Environ(), "FOYA_TOKEN=")
	if out, err := cli.CombinedOutput(); err != nil {
		t.Fatalf("CLI with the data dir's token: %v\n%s", err, out)
	}
	cli = exec.Command(foyaBin, "sessions", "list", "--addr", "127.0.0.1:"+portOf(t, k.addr), "--data-dir", t.TempDir())
	cli.Env = append(os.Environ(), "FOYA_TOKEN="+wrong.token)
	if out, err := cli.CombinedOutput(); err == nil || !strings.Contains(string(out), "(UNAUTHENTICATED)") {
		t.Fatalf("CLI with a wrong FOYA_TOKEN: %v\n%s", err, out)
	}
	cli = exec.Command(foyaBin, "sessions", "list", "--addr", "127.0.0.1:"+portOf(t, k.addr), "--data-dir", t.TempDir(), "--token-file", tokPath)
	cli.Env = append(os.Environ(), "FOYA_TOKEN=")
	if out, err := cli.CombinedOutput(); err != nil {
		t.Fatalf("CLI with --token-file: %v\n%s", err, out)
	}

	// Rotation.
	if out, err := exec.Command(foyaBin, "token", "rotate", "--data-dir", data).CombinedOutput(); err != nil {
		t.Fatalf("token rotate: %v\n%s", err, out)
	}
	raw, _ = os.ReadFile(tokPath)
	newTok := strings.TrimSpace(string(raw))
	if newTok == token || len(newTok) != 43 {
		t.Fatalf("rotate: %q", newTok)
	}
	// No request needed: the kernel's watcher notices the new file and
	// closes the streams opened with the old token.
	for _, c := range []*websocket.Conn{conn, hdrConn} {
		for {
			var m struct{ Type string }
			if err := wsjson.Read(ctx, c, &m); err != nil {
				mustCloseCode(t, err, 4403, "WebSocket opened with the old token")
				break
			}
		}
	}
	if _, err := io.Copy(io.Discard, sse.Body); err != nil {
		t.Fatalf("SSE stream opened with the old token stayed open: %v", err)
	}
	mustRefuse(t, right.post(t, q, false), "POST with the rotated-out token")
	mustData(t, authClient{base, hc, newTok}.post(t, q, false), "POST with the new token")
	c2, err := none.wsInit(ctx, t, nil, map[string]any{"authorization": "Bearer " + newTok})
	if err != nil {
		t.Fatalf("WebSocket with the new token: %v", err)
	}
	c2.CloseNow()
	if strings.Contains(k.Logs(), newTok) {
		t.Fatal("the new token was logged")
	}
}

// --require-token asks for the token on loopback too.
func TestServeRequireTokenOnLoopback(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	tokFile := filepath.Join(t.TempDir(), "secret", "token")
	k := startKernel(t, data, "--require-token", "--auth-token-file", tokFile)
	hc := &http.Client{}
	mustRefuse(t, authClient{k.url(), hc, ""}.post(t, `{ sessions { id } }`, false), "loopback POST without token")
	raw, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	mustData(t, authClient{k.url(), hc, strings.TrimSpace(string(raw))}.post(t, `{ sessions { id } }`, false), "loopback POST with the token")
	if strings.Contains(k.Logs(), "without TLS") {
		t.Fatalf("a loopback kernel warned about TLS:\n%s", k.Logs())
	}
	if _, err := os.Stat(filepath.Join(data, "auth-token")); err == nil {
		t.Fatal("--auth-token-file ignored: a token was created in the data dir")
	}
}

// Every address of 127.0.0.0/8 is loopback: the web link with the token is
// logged (never beyond loopback), its Host is served, and pages of other
// loopback ports get CORS answers. (Before issue 28 a loopback kernel needed
// no token; the default client's requests now carry it, see kernelTokens.)
func TestServeLoopbackAliasAndCORS(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir(), "--addr", "127.0.0.2:0")
	if !strings.HasPrefix(k.addr, "127.0.0.2:") {
		t.Fatalf("listening on %s", k.addr)
	}
	if strings.Contains(k.Logs(), "without TLS") || !strings.Contains(k.Logs(), "http://"+k.addr+"/#token="+k.token) {
		t.Fatalf("127.0.0.2 was not treated as loopback:\n%s", k.Logs())
	}
	body := `{"query":"{ sessions { id } }"}` // raw: a browser-like request with an Origin
	req, _ := http.NewRequest(http.MethodPost, k.url()+"/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://127.0.0.5:5173")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "http://127.0.0.5:5173" {
		t.Fatalf("no CORS header for a loopback page: %v", resp.Header)
	}
	mustData(t, resp, "POST from a loopback page to 127.0.0.2")

	// A preflight for a POST with Authorization (a web client of a kernel with a token).
	req, _ = http.NewRequest(http.MethodOptions, k.url()+"/graphql", nil)
	req.Header.Set("Origin", "http://localhost:3000")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	// A foreign page still gets nothing.
	req, _ = http.NewRequest(http.MethodOptions, k.url()+"/graphql", nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("foreign preflight: %d %v", resp.StatusCode, resp.Header)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key; it returns
// their paths and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "foya test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// --tls-cert/--tls-key serve HTTPS and WSS; no clear-text warning then.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	certFile, keyFile, pool := selfSigned(t)
	data := t.TempDir()
	k := startKernel(t, data, "--addr", "0.0.0.0:0", "--tls-cert", certFile, "--tls-key", keyFile)
	if strings.Contains(k.Logs(), "without TLS") || !strings.Contains(k.Logs(), "playground=https://") {
		t.Fatalf("TLS kernel log:\n%s", k.Logs())
	}
	raw, _ := os.ReadFile(filepath.Join(data, "auth-token"))
	token := strings.TrimSpace(string(raw))
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	base := "https://127.0.0.1:" + portOf(t, k.addr)
	mustRefuse(t, authClient{base, hc, ""}.post(t, `{ sessions { id } }`, false), "HTTPS without token")
	c := authClient{base, hc, token}
	mustData(t, c.post(t, `{ sessions { id } }`, false), "HTTPS POST")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := c.wsInit(ctx, t, nil, map[string]any{"authorization": "Bearer " + token})
	if err != nil {
		t.Fatalf("WSS: %v", err)
	}
	wsSubscribe(ctx, t, conn)
	conn.Close(websocket.StatusNormalClosure, "")
	// Plain HTTP to the TLS port is not served.
	if resp, err := http.Post("http://127.0.0.1:"+portOf(t, k.addr)+"/graphql", "application/json", strings.NewReader(`{}`)); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP served by a TLS kernel")
		}
	}
	// The CLI over HTTPS and WSS, trusting the certificate via SSL_CERT_FILE.
	cli := exec.Command(foyaBin, "sessions", "list", "--addr", base, "--data-dir", data)
	cli.Env = append(os.Environ(), "SSL_CERT_FILE="+certFile, "FOYA_TOKEN=")
	if out, err := cli.CombinedOutput(); err != nil {
		t.Fatalf("CLI over HTTPS: %v\n%s", err, out)
	}
	// A renewed certificate is served without a restart.
	cert2, key2, pool2 := selfSigned(t)
	for from, to := range map[string]string{key2: keyFile, cert2: certFile} {
		b, _ := os.ReadFile(from)
		if err := os.WriteFile(to, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hc2 := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool2}}}
	mustData(t, authClient{base, hc2, token}.post(t, `{ sessions { id } }`, false), "HTTPS with the renewed certificate")
	k.waitLog(t, "reloaded the TLS certificate")
}

// waitLog waits until the kernel's log (read from a pipe) contains s.
func (k *kernelProc) waitLog(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(k.Logs(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("the kernel never logged %q:\n%s", s, k.Logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
