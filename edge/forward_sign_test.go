package edge

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// A forwarding header reaches the resolvers only with a valid signature of
// the cluster's key over the method, path, forwarding headers and body, made
// within signatureSkew; anything else is served as a client's request.
func TestCheckForwardingSignature(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	signer := newRequestSigner(key)
	now := time.Unix(1_800_000_000, 0)
	signer.now = func() time.Time { return now }
	var seen http.Header
	var seenBody string
	h := checkForwarding(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		b, _ := io.ReadAll(r.Body)
		seenBody = string(b)
	}), signer, 1<<20, slog.New(slog.DiscardHandler))

	const body = `{"query":"mutation { stopTurn(sessionId: \"ses_1\") { id } }"}`
	newReq := func(b string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader([]byte(b)))
		r.Header.Set(ForwardedHeader, "node-a")
		return r
	}
	signed := func(s *requestSigner, b string) *http.Request {
		r := newReq(b)
		s.sign(r, []byte(b))
		return r
	}
	other := newRequestSigner(bytes.Repeat([]byte{8}, 32))
	other.now = signer.now
	stale := newRequestSigner(key)
	stale.now = func() time.Time { return now.Add(-signatureSkew - time.Second) }
	cases := []struct {
		name string
		req  *http.Request
		keep bool
	}{
		{"valid", signed(signer, body), true},
		{"no signature (forged)", newReq(body), false},
		{"another cluster's key", signed(other, body), false},
		{"stale", signed(stale, body), false},
		{"body changed", func() *http.Request {
			r := signed(signer, body)
			r.Body = io.NopCloser(bytes.NewReader([]byte(body + " ")))
			return r
		}(), false},
		{"passed-on added", func() *http.Request { r := signed(signer, body); r.Header.Set(passedOnHeader, "1"); return r }(), false},
		{"path changed", func() *http.Request { r := signed(signer, body); r.URL.Path = "/foya/state"; return r }(), false},
		{"garbage", func() *http.Request {
			r := newReq(body)
			r.Header.Set(SignatureHeader, "v1,"+strconv.FormatInt(now.Unix(), 10)+",AAAA")
			return r
		}(), false},
	}
	for _, tc := range cases {
		seen, seenBody = nil, ""
		h.ServeHTTP(httptest.NewRecorder(), tc.req)
		got := seen.Get(ForwardedHeader) != ""
		if got != tc.keep {
			t.Errorf("%s: forwarding header kept = %v, want %v", tc.name, got, tc.keep)
		}
		if seen.Get(SignatureHeader) != "" {
			t.Errorf("%s: the signature reached the handler", tc.name)
		}
		if seenBody == "" {
			t.Errorf("%s: the body did not reach the handler", tc.name)
		}
	}
	// Without a cluster key (SQLite) no forwarding header is ever honoured.
	seen = nil
	checkForwarding(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Header.Clone() }), nil, 1<<20, slog.New(slog.DiscardHandler)).
		ServeHTTP(httptest.NewRecorder(), signed(signer, body))
	if seen.Get(ForwardedHeader) != "" {
		t.Error("a kernel without a cluster key honoured a forwarding header")
	}
}

// The signature header is a client's input until checked: any value is
// refused without a panic, unless it is the real signature.
func FuzzRequestSignature(f *testing.F) {
	f.Add("v1,1800000000,AAAA", []byte(`{}`))
	f.Add("v1,,", []byte(nil))
	f.Add("v1,-9223372036854775808,"+string(bytes.Repeat([]byte("A"), 43)), []byte("x"))
	f.Add("v2,1800000000,x,y", []byte(`{"query":"{ sessions { id } }"}`))
	signer := newRequestSigner(bytes.Repeat([]byte{7}, 32))
	now := time.Unix(1_800_000_000, 0)
	signer.now = func() time.Time { return now }
	f.Fuzz(func(t *testing.T, sig string, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		r.Header.Set(ForwardedHeader, "node")
		r.Header.Set(SignatureHeader, sig)
		if signer.valid(r, body) {
			want := httptest.NewRequest(http.MethodPost, "/graphql", nil)
			want.Header.Set(ForwardedHeader, "node")
			signer.sign(want, body)
			if want.Header.Get(SignatureHeader) != sig {
				t.Fatalf("accepted %q", sig)
			}
		}
	})
}
