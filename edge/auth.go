package edge

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/edge/access"
)

// WebSocket close code of a refused connection_init (and of a connection
// whose token was rotated), as in graphql-transport-ws.
const closeForbidden = 4403

// Failed authentication attempts allowed per peer: a burst of failBurst, then
// one more every failRefill.
const (
	failBurst  = 20
	failRefill = 3 * time.Second
)

// errTokenRotated ends streams authenticated with a token that was replaced.
var errTokenRotated = errors.New("the kernel's token was rotated")

// Auth holds the bearer token every request must carry. The token lives in a
// file; the kernel re-reads it when the file changes (checked on every
// authentication and every WatchInterval by Watch), so `foya token rotate`
// takes effect on a running kernel: requests need the new token at once, and
// WebSocket and SSE streams opened with the old one are closed.
type Auth struct {
	path    string
	log     *slog.Logger
	limiter *peerLimiter

	mu   sync.Mutex
	gen  *tokenGen
	file os.FileInfo // what gen was read from
}

// WatchInterval is how often Watch looks at the token file.
const WatchInterval = time.Second

// tokenGen is one token and the lifetime of the streams it authenticated.
type tokenGen struct {
	sum    [sha256.Size]byte
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// NewAuth loads the token in path, creating the file (0600) when missing.
// The log names the file, never the token.
func NewAuth(path string, log *slog.Logger) (*Auth, error) {
	if log == nil {
		log = slog.Default()
	}
	tok, created, err := access.LoadOrCreateToken(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		log.Warn("the token file is readable by other users; chmod 600 it", "token_file", path, "mode", fi.Mode().Perm().String())
	}
	a := &Auth{path: path, log: log, limiter: newPeerLimiter(failBurst, failRefill, time.Now), file: fi}
	a.gen = newTokenGen(tok)
	if created {
		log.Info("created a bearer token for clients (`foya token show` prints it)", "token_file", path)
	} else {
		log.Info("clients must send the bearer token", "token_file", path)
	}
	return a, nil
}

func newTokenGen(tok string) *tokenGen {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &tokenGen{sum: sha256.Sum256([]byte(tok)), ctx: ctx, cancel: cancel}
}

// Path is the token file.
func (a *Auth) Path() string { return a.path }

// Watch re-reads the token file every interval until ctx ends, so that a
// rotation closes old streams even when no new request arrives.
func (a *Auth) Watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			a.current()
		}
	}
}

// current returns the token in force, re-reading the file when its identity,
// size or modification time changed. A file that cannot be read or holds no
// valid token leaves the previous token in force (and is logged).
func (a *Auth) current() *tokenGen {
	fi, statErr := os.Stat(a.path)
	a.mu.Lock()
	defer a.mu.Unlock()
	if statErr != nil {
		if a.file != nil {
			a.log.Warn("cannot read the token file; the previous token stays in force", "token_file", a.path, "err", statErr)
			a.file = nil
		}
		return a.gen
	}
	if a.file != nil && os.SameFile(a.file, fi) && a.file.Size() == fi.Size() && a.file.ModTime().Equal(fi.ModTime()) {
		return a.gen
	}
	a.file = fi
	tok, err := access.ReadToken(a.path)
	if err != nil {
		a.log.Warn("the token file changed but holds no valid token; the previous token stays in force", "token_file", a.path, "err", err)
		return a.gen
	}
	sum := sha256.Sum256([]byte(tok))
	if subtle.ConstantTimeCompare(sum[:], a.gen.sum[:]) == 1 {
		return a.gen
	}
	old := a.gen
	a.gen = newTokenGen(tok)
	old.cancel(errTokenRotated)
	a.log.Info("the token file changed: new token in force, connections with the old one closed", "token_file", a.path)
	return a.gen
}

// check compares a presented token with the one in force in constant time.
func (a *Auth) check(presented string) (*tokenGen, bool) {
	gen := a.current()
	sum := sha256.Sum256([]byte(presented))
	return gen, subtle.ConstantTimeCompare(sum[:], gen.sum[:]) == 1
}

// bearer extracts the token of an "Authorization: Bearer <token>" value.
func bearer(v string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// authState is what the HTTP middleware learned about a request, for the
// WebSocket init that completes the authentication.
type authState struct {
	peer     string
	remote   string
	headerOK bool // a valid Authorization header came with the upgrade
	cancel   context.CancelCauseFunc

	mu      sync.Mutex
	stopGen func() bool
}

type authStateKey struct{}

// bind ties the request's lifetime to gen: when the token is rotated the
// request's context is cancelled with errTokenRotated.
func (st *authState) bind(gen *tokenGen) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.stopGen != nil {
		st.stopGen()
	}
	st.stopGen = context.AfterFunc(gen.ctx, func() { st.cancel(context.Cause(gen.ctx)) })
}

// Protect requires the token on every request to h, as for /graphql (the
// kernel's --pprof endpoint uses it).
func (a *Auth) Protect(h http.Handler) http.Handler { return a.middleware(h) }

// middleware refuses every request that does not carry the token, except
// WebSocket upgrades without an Authorization header: those authenticate in
// connection_init (wsInit).
func (a *Auth) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer := peerKey(r.RemoteAddr)
		if wait := a.limiter.blocked(peer); wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			writeAuthError(w, http.StatusTooManyRequests, fmt.Sprintf("too many failed authentication attempts from %s; retry in %s", peer, wait.Round(time.Second)))
			return
		}
		ctx, cancel := context.WithCancelCause(r.Context())
		defer cancel(nil)
		st := &authState{peer: peer, remote: r.RemoteAddr, cancel: cancel}
		defer func() {
			st.mu.Lock()
			if st.stopGen != nil {
				st.stopGen()
			}
			st.mu.Unlock()
		}()
		// Only a real WebSocket handshake may defer to connection_init: any
		// other request with an Upgrade header (e.g. a POST that the SSE
		// transport would take) needs the header like everything else.
		isWS := r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
		if h := r.Header.Get("Authorization"); h != "" {
			tok, ok := bearer(h)
			gen, valid := a.check(tok)
			if !ok || !valid {
				a.failed(peer, "wrong token", r)
				writeAuthError(w, http.StatusUnauthorized, "the bearer token is not this kernel's (it may have been rotated)")
				return
			}
			st.headerOK = true
			st.bind(gen)
		} else if !isWS {
			a.failed(peer, "no token", r)
			w.Header().Set("WWW-Authenticate", `Bearer realm="foya"`)
			writeAuthError(w, http.StatusUnauthorized, "this kernel requires a token: send Authorization: Bearer <token> (the token is in the kernel's auth-token file; the CLI reads it, or FOYA_TOKEN)")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, authStateKey{}, st)))
	})
}

func (a *Auth) failed(peer, why string, r *http.Request) {
	a.logFailure(peer, why, "http "+r.Method, r.RemoteAddr)
}

// logFailure records a failed attempt. Attempts refused by the limiter are
// not logged, so the log grows at most at the limiter's rate.
func (a *Auth) logFailure(peer, why, via, remote string) {
	if a.limiter.fail(peer) {
		a.log.Warn("authentication failed", "peer", remote, "reason", why, "via", via)
		return
	}
	a.log.Warn("authentication failed; too many failures: this peer is refused for a while (refused attempts are not logged)",
		"peer", remote, "reason", why, "via", via, "burst", failBurst, "refill", failRefill.String())
}

// wsInit authenticates a WebSocket in connection_init: the payload's
// "authorization" ("Bearer <token>"), or a valid Authorization header on the
// upgrade. A refusal closes the socket with 4403.
func (a *Auth) wsInit(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	refuse := func(reason string) (context.Context, *transport.InitPayload, error) {
		ctx := transport.WithWebsocketCloseCode(transport.AppendCloseReason(ctx, "UNAUTHENTICATED: "+reason), closeForbidden)
		return ctx, nil, errors.New(reason)
	}
	st, _ := ctx.Value(authStateKey{}).(*authState)
	if st == nil {
		return refuse("the connection did not pass the kernel's authentication") // not behind middleware: fail closed
	}
	v := payload.Authorization()
	if v == "" && st.headerOK {
		return ctx, nil, nil
	}
	if v == "" {
		a.failedWS(st, "no token")
		return refuse(`no token: send {"authorization": "Bearer <token>"} in connection_init`)
	}
	tok, ok := bearer(v)
	gen, valid := a.check(tok)
	if !ok || !valid {
		a.failedWS(st, "wrong token")
		return refuse("the bearer token is not this kernel's")
	}
	st.bind(gen)
	return ctx, nil, nil
}

func (a *Auth) failedWS(st *authState, why string) {
	a.logFailure(st.peer, why, "websocket connection_init", st.remote)
}

// writeAuthError answers with a GraphQL error coded UNAUTHENTICATED.
func writeAuthError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{
		"message": msg, "extensions": map[string]any{"code": string(core.CodeUnauthenticated)},
	}}})
}

// peerKey is the rate-limiting key of a remote address: its IP, or its /64
// for IPv6 (one host usually owns a whole /64).
func peerKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() != nil {
		return ip.String()
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
}

// peerLimiter is a token bucket of failed attempts per peer.
type peerLimiter struct {
	burst  float64
	refill time.Duration
	now    func() time.Time

	mu    sync.Mutex
	peers map[string]*failBucket
}

type failBucket struct {
	left float64
	at   time.Time
}

// maxPeers bounds the limiter's memory; beyond it, refilled buckets are
// forgotten, and if that is not enough, all of them.
const maxPeers = 10000

func newPeerLimiter(burst int, refill time.Duration, now func() time.Time) *peerLimiter {
	return &peerLimiter{burst: float64(burst), refill: refill, now: now, peers: map[string]*failBucket{}}
}

func (l *peerLimiter) level(b *failBucket, now time.Time) float64 {
	return math.Min(l.burst, b.left+float64(now.Sub(b.at))/float64(l.refill))
}

// blocked says how long peer must wait before its next attempt (0: now).
func (l *peerLimiter) blocked(peer string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.peers[peer]
	if b == nil {
		return 0
	}
	lv := l.level(b, l.now())
	if lv >= 1 {
		return 0
	}
	return time.Duration((1 - lv) * float64(l.refill))
}

// fail records a failed attempt; false when it was peer's last one for now.
func (l *peerLimiter) fail(peer string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.peers[peer]
	if b == nil {
		if len(l.peers) >= maxPeers {
			l.prune(now)
		}
		b = &failBucket{left: l.burst, at: now}
		l.peers[peer] = b
	}
	b.left, b.at = l.level(b, now)-1, now
	return b.left >= 1
}

func (l *peerLimiter) prune(now time.Time) {
	for k, b := range l.peers {
		if l.level(b, now) >= l.burst {
			delete(l.peers, k)
		}
	}
	if len(l.peers) >= maxPeers {
		clear(l.peers)
	}
}

// rotationAwareWS closes a WebSocket whose token was rotated with 4403
// instead of gqlgen's normal closure, so clients know to ask for the new one.
type rotationAwareWS struct {
	inner transport.WebsocketImplementation
}

func (i rotationAwareWS) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	c, err := i.inner.Accept(w, r, opts)
	if err != nil {
		return nil, err
	}
	return &rotationAwareConn{WebsocketConn: c, ctx: r.Context()}, nil
}

type rotationAwareConn struct {
	transport.WebsocketConn
	ctx context.Context
}

func (c *rotationAwareConn) WriteClose(code int, msg string) error {
	if errors.Is(context.Cause(c.ctx), errTokenRotated) {
		code, msg = closeForbidden, "UNAUTHENTICATED: the token was rotated"
	}
	return c.WebsocketConn.WriteClose(code, msg)
}

func (c *rotationAwareConn) SetReadLimit(n int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(n)
	}
}

func (c *rotationAwareConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}
