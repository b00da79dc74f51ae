package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/foya-dev/foya/client"
)

// A request the kernel refused with 429 RATE_LIMITED is sent again after
// Retry-After, with the same body; other 429s are not retried.
func TestRetriesRateLimited(t *testing.T) {
	var calls atomic.Int32
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if calls.Add(1) <= 2 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"errors":[{"message":"busy","extensions":{"code":"RATE_LIMITED"}}]}`)
			return
		}
		io.WriteString(w, `{"data":{"x":1}}`)
	}))
	defer srv.Close()
	c := client.New(srv.URL, "")
	var out struct{ X int }
	if err := c.Do(context.Background(), `{ x }`, nil, &out); err != nil || out.X != 1 {
		t.Fatalf("err %v, out %+v", err, out)
	}
	if calls.Load() != 3 || bodies[0] != bodies[2] || bodies[0] == "" {
		t.Fatalf("%d calls, bodies %q", calls.Load(), bodies)
	}

	calls.Store(0)
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"errors":[{"message":"too many failed attempts","extensions":{"code":"UNAUTHENTICATED"}}]}`)
	}))
	defer auth.Close()
	c = client.New(auth.URL, "")
	if err := c.Do(context.Background(), `{ x }`, nil, &out); err == nil || calls.Load() != 1 {
		t.Fatalf("an authentication 429: err %v after %d calls", err, calls.Load())
	}
}
