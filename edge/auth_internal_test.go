package edge

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/edge/access"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestPeerLimiter(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	l := newPeerLimiter(3, time.Second, clk.now)
	for i := range 3 {
		if w := l.blocked("a"); w != 0 {
			t.Fatalf("attempt %d blocked", i)
		}
		if last := !l.fail("a"); last != (i == 2) {
			t.Fatalf("attempt %d: last=%v", i, last)
		}
	}
	if w := l.blocked("a"); w != time.Second {
		t.Fatalf("after the burst: wait %v, want 1s", w)
	}
	if l.blocked("b") != 0 {
		t.Fatal("another peer is blocked")
	}
	clk.add(time.Second)
	if l.blocked("a") != 0 {
		t.Fatal("not refilled after 1s")
	}
	l.fail("a")
	if l.blocked("a") == 0 {
		t.Fatal("refilled more than one attempt")
	}
	clk.add(time.Hour)
	if l.blocked("a") != 0 || !l.fail("a") {
		t.Fatal("burst not restored")
	}
}

func TestPeerKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7:4000":            "192.0.2.7",
		"[2001:db8:1:2:3::4]:4000":  "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::]:400": "2001:db8:1:2::/64",
	} {
		if got := peerKey(in); got != want {
			t.Errorf("peerKey(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestBearer(t *testing.T) {
	for in, want := range map[string]string{"Bearer abc": "abc", "bearer  abc ": "abc", "Basic abc": "", "Bearer": "", "abc": ""} {
		if got, _ := bearer(in); got != want {
			t.Errorf("bearer(%q) = %q, want %q", in, got, want)
		}
	}
}

// Wrong tokens from one peer are refused with 429 (coded, Retry-After)
// once its burst is spent, even when it then sends the right token.
func TestAuthRateLimitsFailures(t *testing.T) {
	path := filepath.Join(t.TempDir(), access.TokenFileName)
	a, err := NewAuth(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	a.limiter = newPeerLimiter(failBurst, failRefill, clk.now)
	srv := httptest.NewServer(a.middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"data":{}}`) })))
	defer srv.Close()
	tok, err := access.ReadToken(path)
	if err != nil {
		t.Fatal(err)
	}
	send := func(token string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct {
			Errors []struct{ Extensions struct{ Code string } }
		}
		raw, _ := io.ReadAll(resp.Body)
		json.Unmarshal(raw, &r)
		code := ""
		if len(r.Errors) > 0 {
			code = r.Errors[0].Extensions.Code
		}
		return resp, code
	}
	for i := range failBurst {
		if resp, code := send("wrong"); resp.StatusCode != http.StatusUnauthorized || code != "UNAUTHENTICATED" {
			t.Fatalf("attempt %d: %d %s", i, resp.StatusCode, code)
		}
	}
	resp, code := send(tok)
	if resp.StatusCode != http.StatusTooManyRequests || code != "UNAUTHENTICATED" || resp.Header.Get("Retry-After") != "3" {
		t.Fatalf("after the burst: %d %s Retry-After=%q", resp.StatusCode, code, resp.Header.Get("Retry-After"))
	}
	clk.add(failRefill)
	if resp, _ := send(tok); resp.StatusCode != http.StatusOK {
		t.Fatalf("after the refill: %d", resp.StatusCode)
	}
}

// The per-request cost of authentication: a stat of the token file, a
// SHA-256 of the presented token and a constant-time compare.
func BenchmarkAuthCheck(b *testing.B) {
	path := filepath.Join(b.TempDir(), access.TokenFileName)
	a, err := NewAuth(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	tok, _ := access.ReadToken(path)
	for b.Loop() {
		if _, ok := a.check(tok); !ok {
			b.Fatal("refused")
		}
	}
}
