package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
)

// getRoute GETs url of a kernel's plain route with token (none when empty)
// and extra headers, and returns the answer with its whole body.
func getRoute(t *testing.T, url, token string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
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
	return resp, b
}

// checkRouteGuarded sends url, a plain route of a kernel that requires its
// token, what /graphql refuses (no token, a wrong one, a WebSocket upgrade
// without it, a foreign page with the right one) and checks each gets a
// short coded refusal without secret (when given).
func checkRouteGuarded(t *testing.T, url, token, secret string) {
	t.Helper()
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
		{"a foreign page", token, map[string]string{"Origin": "https://evil.example"}, 403, "UNAUTHENTICATED"},
	} {
		resp, body := getRoute(t, url, c.token, c.hdr)
		if resp.StatusCode != c.status || !strings.Contains(string(body), `"code":"`+c.code+`"`) || len(body) > 2000 ||
			secret != "" && strings.Contains(string(body), secret) {
			t.Fatalf("%s with %s: %d %.300s", url, c.what, resp.StatusCode, body)
		}
	}
}

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
	url := "http://" + k.base + "/attachments/" + id
	checkRouteGuarded(t, url, k.token, "attachment-secret")
	if resp, body := getRoute(t, url, k.token, nil); resp.StatusCode != 200 || string(body) != secret {
		t.Fatalf("with the token: %d %.100q", resp.StatusCode, body)
	}
}
