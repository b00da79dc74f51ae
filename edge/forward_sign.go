package edge

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries the signature of a request one kernel sends
// another (a forwarded operation, a remote-state query): "v1,<unix
// seconds>,<HMAC-SHA256, base64url>", made with a key derived from the
// cluster's secret key (--secret-key-file, the same file on every node).
// A request that carries ForwardedHeader or passedOnHeader without a valid
// signature has those headers removed before anything reads them: it is
// served as a client's request.
const SignatureHeader = "X-Foya-Signature"

// signatureSkew is how far a signature's time may be from the receiver's
// clock. A signed request copied off the wire can be replayed within it
// (with the same body and target only): keep the nodes' traffic on a
// private network or TLS (docs/cluster.md).
const signatureSkew = 2 * time.Minute

// forwardingHeaders are the headers only another node may set.
var forwardingHeaders = []string{ForwardedHeader, passedOnHeader}

// requestSigner signs and checks the requests between kernels.
type requestSigner struct {
	key []byte
	now func() time.Time
}

// newRequestSigner derives the signing key from the cluster's secret key
// (nil without one: no request is then accepted as another node's).
func newRequestSigner(secret []byte) *requestSigner {
	if len(secret) == 0 {
		return nil
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("foya cluster request signature v1"))
	return &requestSigner{key: m.Sum(nil), now: time.Now}
}

// mac is the signature of a request at ts: its method, path, forwarding
// headers and body.
func (s *requestSigner) mac(ts int64, method, path string, h http.Header, body []byte) []byte {
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, s.key)
	for _, part := range []string{"v1", strconv.FormatInt(ts, 10), method, path, h.Get(ForwardedHeader), h.Get(passedOnHeader), hex.EncodeToString(sum[:])} {
		m.Write([]byte(part))
		m.Write([]byte{'\n'})
	}
	return m.Sum(nil)
}

// sign sets SignatureHeader on req, whose body is body.
func (s *requestSigner) sign(req *http.Request, body []byte) {
	ts := s.now().Unix()
	req.Header.Set(SignatureHeader, "v1,"+strconv.FormatInt(ts, 10)+","+
		base64.RawURLEncoding.EncodeToString(s.mac(ts, req.Method, req.URL.Path, req.Header, body)))
}

// valid reports whether r (with body) carries a valid, recent signature.
func (s *requestSigner) valid(r *http.Request, body []byte) bool {
	if s == nil {
		return false
	}
	parts := strings.Split(r.Header.Get(SignatureHeader), ",")
	if len(parts) != 3 || parts[0] != "v1" {
		return false
	}
	ts, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return false
	}
	if d := s.now().Sub(time.Unix(ts, 0)); d > signatureSkew || d < -signatureSkew {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return false
	}
	return hmac.Equal(got, s.mac(ts, r.Method, r.URL.Path, r.Header, body))
}

// checkForwarding removes the forwarding headers of a request that is not
// validly signed by another node, so that a client cannot pose as one (a
// forged X-Foya-Forwarded would make the kernel hold the request and poll
// the database for the session's lease). It reads a signed request's body
// (at most maxBody bytes) to check it; requests without forwarding headers
// pass untouched.
func checkForwarding(next http.Handler, signer *requestSigner, maxBody int64, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hasForwardingHeader(r.Header) {
			r.Header.Del(SignatureHeader)
			next.ServeHTTP(w, r)
			return
		}
		ok := false
		if signer != nil && r.Header.Get(SignatureHeader) != "" && r.Body != nil {
			body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
			r.Body.Close()
			if err != nil {
				writeAuthError(w, http.StatusBadRequest, "read the request body: "+err.Error())
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			ok = int64(len(body)) <= maxBody && signer.valid(r, body)
		}
		if !ok {
			for _, h := range forwardingHeaders {
				r.Header.Del(h)
			}
			log.Warn("ignored the forwarding headers of a request without a valid cluster signature", "peer", r.RemoteAddr)
		}
		r.Header.Del(SignatureHeader)
		next.ServeHTTP(w, r)
	})
}

func hasForwardingHeader(h http.Header) bool {
	for _, name := range forwardingHeaders {
		if _, ok := h[http.CanonicalHeaderKey(name)]; ok {
			return true
		}
	}
	return false
}
