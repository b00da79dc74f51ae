package edge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A web page must not drive the local kernel: a cross-site multipart POST (a
// "simple" request browsers send without asking) and a DNS-rebinding Host
// are refused before any operation runs.
func TestBrowserGuard(t *testing.T) {
	k := newTestKernel(t)
	multipartCreate := func(origin, host string) int {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		ops, _ := json.Marshal(map[string]any{"query": `mutation { createSession(input: {title: "csrf"}) { id } }`, "variables": map[string]any{}})
		mw.WriteField("operations", string(ops))
		mw.WriteField("map", `{}`)
		mw.Close()
		req, _ := http.NewRequest(http.MethodPost, k.srv.URL+"/graphql", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := multipartCreate("https://evil.example", ""); code != http.StatusForbidden {
		t.Fatalf("cross-site POST: %d", code)
	}
	if code := multipartCreate("", "evil.example:4777"); code != http.StatusForbidden {
		t.Fatalf("rebinding Host: %d", code)
	}
	if code := multipartCreate("http://evil.example:4777", "evil.example:4777"); code != http.StatusForbidden {
		t.Fatalf("rebinding same-origin: %d", code)
	}
	// Names that merely look loopback are not.
	if code := multipartCreate("http://127.evil.example", ""); code != http.StatusForbidden {
		t.Fatalf("127.evil.example origin: %d", code)
	}
	if code := multipartCreate("", "localhost.evil.example"); code != http.StatusForbidden {
		t.Fatalf("localhost.evil.example Host: %d", code)
	}
	if code := multipartCreate("null", ""); code != http.StatusForbidden {
		t.Fatalf("null origin: %d", code)
	}
	var list struct{ Sessions []struct{ ID string } }
	k.mustDo(t, `{ sessions { id } }`, nil, &list)
	if len(list.Sessions) != 0 {
		t.Fatal("a refused request created a session")
	}
	// Scripts (no Origin), the kernel's own pages and loopback dev servers work.
	for _, origin := range []string{"", k.srv.URL, "http://localhost:5173", "http://127.0.0.9:8080", "http://[::1]:3000"} {
		if code := multipartCreate(origin, ""); code != http.StatusOK {
			t.Fatalf("origin %q: %d", origin, code)
		}
	}
	// Every loopback Host: all of 127.0.0.0/8, ::1, localhost.
	for _, host := range []string{"127.0.0.2:4777", "127.255.0.1", "[::1]:4777", "localhost:1", "LOCALHOST."} {
		if code := multipartCreate("", host); code != http.StatusOK {
			t.Fatalf("Host %q: %d", host, code)
		}
	}
}

// A WebSocket from a foreign browser origin is refused; a loopback dev
// server's is accepted.
func TestWebSocketOriginCheck(t *testing.T) {
	k := newTestKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := http.Header{}
	h.Set("Origin", "https://evil.example")
	_, resp, err := websocket.Dial(ctx, strings.Replace(k.srv.URL, "http", "ws", 1)+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: h})
	if err == nil {
		t.Fatal("a foreign browser origin opened a WebSocket")
	}
	if resp != nil && resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d, want 403", resp.StatusCode)
	}
	h.Set("Origin", "http://localhost:5173")
	conn, _, err := websocket.Dial(ctx, strings.Replace(k.srv.URL, "http", "ws", 1)+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: h})
	if err != nil {
		t.Fatalf("loopback origin refused: %v", err)
	}
	conn.Close(websocket.StatusNormalClosure, "")
}
