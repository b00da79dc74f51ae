package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
)

// GET /attachments/{id} is guarded exactly like /graphql on a kernel that
// requires its token (listening beyond loopback): no token, a wrong one, a
// foreign page and an upgrade without the token are refused with coded
// errors and none of the bytes; the token holder gets them.
func TestAttachmentRouteGuarded(t *testing.T) {
	t.Parallel()
	k := startTokenKernel(t)
	secret := strings.Repeat("attachment-secret ", 20)
	id, err := client.New(k.base, k.token).Upload(context.Background(), "notes.txt", "text/plain", []byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	get := func(token string, hdr map[string]string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+k.base+"/attachments/"+id, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		what   string
		token  string
		hdr    map[string]string
		status int
		code   string
	}{
		{"no token", "", nil, 401, "UNAUTHENTICATED"},
		{"a wrong token", strings.Repeat("x", 43), nil, 401, "UNAUTHENTICATED"},
		{"a WebSocket upgrade without token", "", map[string]string{"Upgrade": "websocket", "Connection": "Upgrade"}, 400, "BAD_INPUT"},
		{"a foreign page", k.token, map[string]string{"Origin": "https://evil.example"}, 403, "UNAUTHENTICATED"},
	} {
		status, body := get(c.token, c.hdr)
		if status != c.status || !strings.Contains(body, `"code":"`+c.code+`"`) || strings.Contains(body, "attachment-secret") {
			t.Fatalf("%s: %d %.300s", c.what, status, body)
		}
	}
	if status, body := get(k.token, nil); status != 200 || body != secret {
		t.Fatalf("with the token: %d %.100q", status, body)
	}
}
