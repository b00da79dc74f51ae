package graph_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

// uploadedAttachment is an attachment as uploadAttachment returns it.
type uploadedAttachment struct {
	ID, Name, Kind, MediaType, Sha256 string
	Size, Width, Height               int
}

// uploadAttachment sends a file with the GraphQL multipart request spec
// and returns the attachment.
func (k *testKernel) uploadAttachment(t *testing.T, name string, data []byte) uploadedAttachment {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	ops, _ := json.Marshal(map[string]any{"query": `mutation($f: Upload!) { uploadAttachment(file: $f) { id name kind mediaType size width height sha256 } }`, "variables": map[string]any{"f": nil}})
	mw.WriteField("operations", string(ops))
	mw.WriteField("map", `{"0": ["variables.f"]}`)
	fw, _ := mw.CreateFormFile("0", name)
	fw.Write(data)
	mw.Close()
	resp, err := http.Post(k.srv.URL+"/graphql", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data   struct{ UploadAttachment uploadedAttachment }
		Errors []gqlError
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Errors) > 0 {
		t.Fatalf("upload %s: %v %+v", name, err, out.Errors)
	}
	return out.Data.UploadAttachment
}

// uploadFile uploads data as name and returns the attachment's id and
// media type.
func (k *testKernel) uploadFile(t *testing.T, name string, data []byte) (id, mediaType string) {
	t.Helper()
	a := k.uploadAttachment(t, name, data)
	return a.ID, a.MediaType
}

func (k *testKernel) fetch(t *testing.T, method, path string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, k.srv.URL+path, nil)
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

// GET /attachments/{id} serves an attachment's bytes: images and videos
// inline with their type, anything else to be saved as
// application/octet-stream, never rendered on the kernel's origin; every
// answer sandboxed by its CSP; HEAD, Range and If-None-Match as for a
// static file; coded errors for the rest.
func TestAttachmentRoute(t *testing.T) {
	k := newTestKernel(t)
	png := pngBytes(t)
	pid, _ := k.uploadFile(t, "dot.png", png)
	resp, body := k.fetch(t, http.MethodGet, "/attachments/"+pid, nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, png) || resp.Header.Get("Content-Type") != "image/png" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "sandbox") ||
		!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "inline") || resp.Header.Get("ETag") == "" {
		t.Fatalf("png: %d %v", resp.StatusCode, resp.Header)
	}
	etag := resp.Header.Get("ETag")
	if r, _ := k.fetch(t, http.MethodGet, "/attachments/"+pid, map[string]string{"If-None-Match": etag}); r.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d", r.StatusCode)
	}
	if r, b := k.fetch(t, http.MethodGet, "/attachments/"+pid, map[string]string{"Range": "bytes=1-3"}); r.StatusCode != http.StatusPartialContent || !bytes.Equal(b, png[1:4]) {
		t.Fatalf("Range: %d %q", r.StatusCode, b)
	}
	if r, b := k.fetch(t, http.MethodHead, "/attachments/"+pid, nil); r.StatusCode != 200 || len(b) != 0 || r.ContentLength != int64(len(png)) {
		t.Fatalf("HEAD: %d %d", r.StatusCode, r.ContentLength)
	}
	if r, _ := k.fetch(t, http.MethodGet, "/attachments/"+pid+"?download=1", nil); !strings.HasPrefix(r.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("download: %v", r.Header)
	}

	// HTML and SVG are files to save: never text/html or image/svg+xml on
	// this origin. The name keeps its non-ASCII letters (RFC 6266).
	for _, f := range []struct{ name, data string }{
		{"pagé.html", "<!doctype html><script>alert(document.domain)</script>"},
		{"x.svg", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`},
	} {
		id, _ := k.uploadFile(t, f.name, []byte(f.data))
		r, b := k.fetch(t, http.MethodGet, "/attachments/"+id, nil)
		_, params, err := mime.ParseMediaType(r.Header.Get("Content-Disposition"))
		if r.StatusCode != 200 || string(b) != f.data || r.Header.Get("Content-Type") != "application/octet-stream" ||
			!strings.HasPrefix(r.Header.Get("Content-Disposition"), "attachment") || err != nil || params["filename"] != f.name {
			t.Fatalf("%s: %d %v (%v %v)", f.name, r.StatusCode, r.Header, params, err)
		}
	}

	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{http.MethodGet, "/attachments/att_missing", 404, "NOT_FOUND"},
		{http.MethodGet, "/attachments/ses_1", 400, "BAD_INPUT"},
		{http.MethodPost, "/attachments/" + pid, 405, "BAD_INPUT"},
		{http.MethodDelete, "/attachments/" + pid, 405, "BAD_INPUT"},
	} {
		r, b := k.fetch(t, c.method, c.path, nil)
		if r.StatusCode != c.status || !strings.Contains(string(b), `"code":"`+c.code+`"`) {
			t.Fatalf("%s %s: %d %s", c.method, c.path, r.StatusCode, b)
		}
	}
}
