package edge_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/internal/gqltest"
)

// With the kernel's expensive requests at their limit (one here: a
// multipart upload whose body is still arriving), another upload and an
// export are refused with 429 RATE_LIMITED and Retry-After; a cheap query
// is served; once the upload ends, the export runs.
func TestExpensiveRequestsAreLimited(t *testing.T) {
	k := newTestKernel(t, func(c *edge.Config) { c.Limits.MaxExpensive = 1 })
	u, _ := url.Parse(k.srv.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: %s\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: 1000\r\n\r\n--x\r\n", u.Host)
	time.Sleep(300 * time.Millisecond) // the kernel has taken it in

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	ops, _ := json.Marshal(map[string]any{"query": `mutation($f: Upload!) { uploadAttachment(file: $f) { id } }`, "variables": map[string]any{"f": nil}})
	mw.WriteField("operations", string(ops))
	mw.WriteField("map", `{"0": ["variables.f"]}`)
	fw, _ := mw.CreateFormFile("0", "a.txt")
	fw.Write([]byte("hello"))
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, k.srv.URL+"/graphql", bytes.NewReader(body.Bytes()))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	do := func(req *http.Request) (httpReply, http.Header) {
		t.Helper()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r httpReply
		r.Status = resp.StatusCode
		buf := new(bytes.Buffer)
		buf.ReadFrom(resp.Body)
		r.Raw = buf.Bytes()
		json.Unmarshal(r.Raw, &r.Response)
		return r, resp.Header
	}
	r, h := do(req)
	if r.Status != http.StatusTooManyRequests || h.Get("Retry-After") == "" || r.RequireCoded(t, "second upload").Extensions.Code != "RATE_LIMITED" {
		t.Fatalf("a second upload: HTTP %d, Retry-After %q: %s", r.Status, h.Get("Retry-After"), r.Raw)
	}
	export := func() (httpReply, http.Header) {
		req, _ := http.NewRequest(http.MethodPost, k.srv.URL+"/graphql", strings.NewReader(`{"query":"{ exportSession(id: \"ses_none\") }"}`))
		req.Header.Set("Content-Type", "application/json")
		return do(req)
	}
	r, h = export()
	if r.Status != http.StatusTooManyRequests || h.Get("Retry-After") == "" || r.RequireCoded(t, "export").Extensions.Code != "RATE_LIMITED" {
		t.Fatalf("an export: HTTP %d, Retry-After %q: %s", r.Status, h.Get("Retry-After"), r.Raw)
	}
	var out struct{ Sessions []struct{ ID string } }
	k.mustDo(t, `{ sessions { id } }`, nil, &out)

	conn.Close() // the upload ends: its slot is free
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, _ = export()
		if r.Status != http.StatusTooManyRequests {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot of the ended upload was not freed: %s", r.Raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if e := r.RequireCoded(t, "export after"); e.Extensions.Code != "NOT_FOUND" {
		t.Fatalf("export once the upload ended: HTTP %d %s", r.Status, r.Raw)
	}
}

// The cost model counts the elements of lists in arguments: 120,000 ids
// (480 KB of variables, within their budget) cost more than the limit.
func TestCostCountsVariableLists(t *testing.T) {
	k := newTestKernel(t)
	ids := make([]string, 120_000)
	for i := range ids {
		ids[i] = "a"
	}
	body, _ := json.Marshal(map[string]any{"query": `mutation($ids: [ID!]!) { reorderConnections(ids: $ids) { id } }`, "variables": map[string]any{"ids": ids}})
	r := postRaw(t, k, "application/json", bytes.NewReader(body))
	if e := r.RequireCoded(t, "120,000 ids"); e.Extensions.Code != "BAD_INPUT" || !strings.Contains(e.Message, "operation cost 120") {
		t.Fatalf("HTTP %d: %.300s", r.Status, r.Raw)
	}
}

// The operations part of a multipart request has the variables budget of
// a JSON request (the files are outside it); a normal upload passes.
func TestMultipartOperationsBudget(t *testing.T) {
	k := newTestKernel(t)
	send := func(query string, vars map[string]any) httpReply {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		ops, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		mw.WriteField("operations", string(ops))
		mw.WriteField("map", `{"0": ["variables.f"]}`)
		fw, _ := mw.CreateFormFile("0", "a.txt")
		fw.Write(bytes.Repeat([]byte("x"), 2<<20)) // files do not count
		mw.Close()
		req, _ := http.NewRequest(http.MethodPost, k.srv.URL+"/graphql", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		return gqltest.Send(t, req)
	}
	pad := make([]int, 600_000) // "0," each: 1.2 MB
	r := send(`mutation($f: Upload!, $pad: [Int!]) { uploadAttachment(file: $f) { id size } }`, map[string]any{"f": nil, "pad": pad})
	if r.Status != http.StatusRequestEntityTooLarge || r.RequireCoded(t, "big operations").Extensions.Code != "BAD_INPUT" || !strings.Contains(r.Errors[0].Message, "1 MiB, the limit of variables") {
		t.Fatalf("HTTP %d: %.300s", r.Status, r.Raw)
	}
	r = send(`mutation($f: Upload!) { uploadAttachment(file: $f) { id size } }`, map[string]any{"f": nil})
	if r.Status != http.StatusOK || len(r.Errors) > 0 || !bytes.Contains(r.Raw, []byte(`"size":2097152`)) {
		t.Fatalf("a normal upload: HTTP %d: %.300s", r.Status, r.Raw)
	}
}
