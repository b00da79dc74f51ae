package serve

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestServeProfiles(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", "example.com:0", "nonsense"} {
		if ln, err := serveProfiles(addr); err == nil {
			ln.Close()
			t.Errorf("serveProfiles(%q) listened, want an error (loopback only)", addr)
		}
	}
	ln, err := serveProfiles("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + ln.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(body, "goroutine profile:") {
		t.Errorf("goroutine profile: %d %.100q", code, body)
	}
	if code, body := get("/debug/pprof/heap"); code != http.StatusOK || len(body) == 0 {
		t.Errorf("heap profile: %d, %d bytes", code, len(body))
	}
	if code, _ := get("/debug/pprof/nosuch"); code != http.StatusNotFound {
		t.Errorf("unknown profile: %d, want 404", code)
	}
	if code, body := get("/debug/metrics"); code != http.StatusOK || !strings.Contains(body, "gc/heap/live=") || !strings.Contains(body, "sched/goroutines:goroutines=") {
		t.Errorf("metrics: %d %q", code, body)
	}
}
