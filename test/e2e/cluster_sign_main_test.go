package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// A client cannot pose as another kernel: forwarding headers without the
// cluster's signature are ignored. Node B receives a command about A's
// session with forged X-Foya-Forwarded / X-Foya-Passed-On headers (and a
// made-up signature): B forwards it to A like any client's command (before,
// B believed a node had sent it, refused to pass it on and answered
// UNAVAILABLE, or held it while polling the database). The state endpoint
// answers a forged call 404, as it answers clients. Real forwarding, signed,
// still works (TestClusterForwardingAndFanOut and the others).
func TestClusterForgedForwardingHeaderIgnored(t *testing.T) {
	fake := openaitest.New(t)
	_, ns := startCluster(t, 2)
	a, b := ns[0], ns[1]
	sid := a.chatSession(t, fake.BaseURL())

	post := func(k *clusterNode, path string, hdr map[string]string, body []byte) (int, []byte, time.Duration) {
		req, _ := http.NewRequest(http.MethodPost, k.url()+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for h, v := range hdr {
			req.Header.Set(h, v)
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw, time.Since(start)
	}
	forged := []map[string]string{
		{edge.ForwardedHeader: "node-that-does-not-exist", "X-Foya-Passed-On": "1"},
		{edge.ForwardedHeader: "node-that-does-not-exist", "X-Foya-Passed-On": "1", edge.SignatureHeader: "v1," + time.Now().Format("20060102") + ",AAAA"},
		{edge.ForwardedHeader: "x"},
	}
	for i, hdr := range forged {
		title := "forged " + string(rune('A'+i))
		// Raw: the request carries forged forwarding headers.
		body, _ := json.Marshal(map[string]any{
			"query":     `mutation($s: ID!, $t: String) { updateSession(id: $s, input: {title: $t}) { id title } }`,
			"variables": map[string]any{"s": sid, "t": title},
		})
		code, raw, took := post(b, "/graphql", hdr, body)
		if code != http.StatusOK || !strings.Contains(string(raw), title) || strings.Contains(string(raw), "errors") {
			t.Fatalf("forged headers %v on B: %d %s (took %s)", hdr, code, raw, took)
		}
		if took > 10*time.Second {
			t.Fatalf("forged headers %v: B held the request %s", hdr, took)
		}
		s := a.sessionDetail(t, sid)
		if s.Session.Title != title {
			t.Fatalf("A, the owner, did not run the command: title %q", s.Session.Title)
		}
	}
	state, _ := json.Marshal(map[string]any{"sessions": []string{sid}})
	if code, raw, _ := post(a, edge.StatePath, forged[0], state); code != http.StatusNotFound {
		t.Fatalf("state endpoint with a forged forwarding header: %d %s", code, raw)
	}
	if !strings.Contains(b.Logs(), "ignored the forwarding headers of a request without a valid cluster signature") {
		t.Fatalf("B did not log the forged headers:\n%s", b.Logs())
	}
}
