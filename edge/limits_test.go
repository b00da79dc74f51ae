package edge_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/internal/gqltest"
)

// nineMiB is a syntactically valid request body of 9 MiB.
func nineMiB() []byte {
	return []byte(`{"query":"{ __typename }","variables":{"pad":"` + strings.Repeat("a", 9<<20) + `"}}`)
}

func TestBodyOverLimitIs413(t *testing.T) {
	k := newTestKernel(t)
	body := nineMiB()
	r := postRaw(t, k, "application/json", bytes.NewReader(body))
	if r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d: %s", r.Status, r.Raw)
	}
	if e := r.RequireCoded(t, "9 MiB body"); e.Extensions.Code != "BAD_INPUT" || !strings.Contains(e.Message, "8 MiB") {
		t.Fatalf("error %+v", e)
	}
	// Without a Content-Length (chunked), the limit holds while reading.
	r = postRaw(t, k, "application/json", io.MultiReader(bytes.NewReader(body)))
	if r.Status != http.StatusRequestEntityTooLarge || r.RequireCoded(t, "chunked 9 MiB body").Extensions.Code != "BAD_INPUT" {
		t.Fatalf("chunked: status %d: %s", r.Status, r.Raw)
	}
	// The SSE transport reads the same way.
	req, _ := http.NewRequest(http.MethodPost, k.srv.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if r := gqltest.Send(t, req); r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("SSE: status %d: %s", r.Status, r.Raw)
	}
	// Just under the limit is served (in the query: variables have a
	// budget of their own, 1 MiB).
	ok := []byte(`{"query":"{ __typename } #` + strings.Repeat("a", 8<<20-100) + `"}`)
	if r := postRaw(t, k, "application/json", bytes.NewReader(ok)); r.Status != http.StatusOK || len(r.Errors) > 0 {
		t.Fatalf("8 MiB - 100: status %d: %.300s", r.Status, r.Raw)
	}
	// Variables over their budget are refused before they are decoded,
	// naming the limit; just under it they are served.
	over := []byte(`{"query":"{ __typename }","variables":{"pad":"` + strings.Repeat("a", 1<<20) + `"}}`)
	if r := postRaw(t, k, "application/json", bytes.NewReader(over)); r.Status != http.StatusRequestEntityTooLarge ||
		r.RequireCoded(t, "variables over 1 MiB").Extensions.Code != "BAD_INPUT" || !strings.Contains(r.Errors[0].Message, "1 MiB, the limit of variables") {
		t.Fatalf("1 MiB of variables: status %d: %.300s", r.Status, r.Raw)
	}
	under := []byte(`{"query":"{ __typename }","variables":{"pad":"` + strings.Repeat("a", 1<<20-20) + `"}}`)
	if r := postRaw(t, k, "application/json", bytes.NewReader(under)); r.Status != http.StatusOK || len(r.Errors) > 0 {
		t.Fatalf("1 MiB - 20 of variables: status %d: %.300s", r.Status, r.Raw)
	}
}

func TestSlowBodyTimesOut(t *testing.T) {
	k := newTestKernel(t, func(c *edge.Config) { c.Limits.BodyReadTimeout = 300 * time.Millisecond })
	u, _ := url.Parse(k.srv.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Headers announce 100 bytes; 10 arrive, then nothing.
	fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"query\":", u.Host)
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	raw, _ := io.ReadAll(resp.Body)
	var r gqlResponse
	if resp.StatusCode != http.StatusRequestTimeout || json.Unmarshal(raw, &r) != nil || len(r.Errors) == 0 || r.Errors[0].Extensions.Code != "BAD_INPUT" {
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
}

func TestTransportErrorsAreCoded(t *testing.T) {
	k := newTestKernel(t)
	u := k.srv.URL + "/graphql"
	req := func(method, target, ct string, body string, h map[string]string) *http.Request {
		r, _ := http.NewRequest(method, target, strings.NewReader(body))
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		for k, v := range h {
			r.Header.Set(k, v)
		}
		return r
	}
	for _, c := range []struct {
		name   string
		req    *http.Request
		status int
	}{
		{"wrong content type", req("POST", u, "text/plain", `{"query":"{ __typename }"}`, nil), http.StatusUnsupportedMediaType},
		{"no content type", req("POST", u, "", `{"query":"{ __typename }"}`, nil), http.StatusUnsupportedMediaType},
		{"unknown method", req("PUT", u, "application/json", `{"query":"{ __typename }"}`, nil), http.StatusMethodNotAllowed},
		{"GET mutation", req("GET", u+"?query="+url.QueryEscape(`mutation { createProject(input: {path: "/tmp"}) { id } }`), "", "", nil), 0},
		{"GET bad variables", req("GET", u+"?query="+url.QueryEscape(`{ __typename }`)+"&variables=%7Bnot-json", "", "", nil), 0},
		{"GET without query", req("GET", u, "", "", nil), 0},
		{"malformed JSON", req("POST", u, "application/json", `{"query":`, nil), http.StatusBadRequest},
		{"broken WebSocket upgrade", req("GET", u, "", "", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket"}), 0},
		{"bad multipart", req("POST", u, "multipart/form-data; boundary=x", "--x\r\nnonsense", nil), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := gqltest.Send(t, c.req)
			if r.Status < 400 && len(r.Errors) == 0 {
				t.Fatalf("status %d: %s", r.Status, r.Raw)
			}
			e := r.RequireCoded(t, c.name)
			t.Logf("HTTP %d: %s", r.Status, e.Message)
			if c.status != 0 && r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Raw)
			}
			if e.Message == "" || e.Message == "transport not supported" {
				t.Fatalf("message %q is not actionable", e.Message)
			}
		})
	}
	// The GET mutation is refused before it runs.
	var out struct{ Projects []struct{ ID string } }
	k.mustDo(t, `{ projects { id } }`, nil, &out)
	if len(out.Projects) != 0 {
		t.Fatalf("a GET mutation ran: %+v", out.Projects)
	}
}
