package client_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
)

// An operation with an Upload variable goes out as a GraphQL multipart
// request (operations, map, the file); others as JSON with the token.
func TestUploadVariablesGoMultipart(t *testing.T) {
	var got struct {
		contentType, auth, operations, mapping, file, fileName string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.contentType, got.auth = r.Header.Get("Content-Type"), r.Header.Get("Authorization")
		if strings.HasPrefix(got.contentType, "multipart/form-data") {
			if err := r.ParseMultipartForm(1 << 20); err != nil {
				t.Error(err)
			}
			got.operations, got.mapping = r.FormValue("operations"), r.FormValue("map")
			f, h, err := r.FormFile("0")
			if err != nil {
				t.Error(err)
			} else {
				b, _ := io.ReadAll(f)
				got.file, got.fileName = string(b), h.Filename
			}
			io.WriteString(w, `{"data":{"importSessionFile":{"id":"ses_new","title":null,"phase":"IDLE","approvalMode":"ASK","createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z","headSeq":3,"usage":{"inputTokens":0,"outputTokens":0,"cachedTokens":0,"cost":null,"unpricedTokens":0}}}}`)
			return
		}
		io.WriteString(w, `{"errors":[{"message":"session ses_x not found","extensions":{"code":"NOT_FOUND"}}],"data":null}`)
	}))
	defer srv.Close()
	c := client.New(srv.URL, "tok")
	pid := "prj_1"
	resp, err := client.ImportSessionFile(t.Context(), c, client.Upload{Name: "s.jsonl", Data: []byte(`{"format":"foya.session"}` + "\n")}, &pid)
	if err != nil || resp.ImportSessionFile.Id != "ses_new" {
		t.Fatalf("import: %+v %v", resp, err)
	}
	var ops struct {
		Query     string
		Variables map[string]any
	}
	if err := json.Unmarshal([]byte(got.operations), &ops); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ops.Query, "importSessionFile(file: $file") || ops.Variables["file"] != nil || ops.Variables["projectId"] != "prj_1" {
		t.Fatalf("operations %s", got.operations)
	}
	if got.mapping != `{"0":["variables.file"]}` || got.file != `{"format":"foya.session"}`+"\n" || got.fileName != "s.jsonl" || got.auth != "Bearer tok" {
		t.Fatalf("multipart request %+v", got)
	}

	_, err = client.ExportSession(t.Context(), c, "ses_x")
	if client.ErrorCode(err) != "NOT_FOUND" || err.Error() != "session ses_x not found (NOT_FOUND)" {
		t.Fatalf("error %v", err)
	}
	if got.contentType != "application/json" {
		t.Fatalf("content type %q", got.contentType)
	}
}

// Do, the escape hatch for documents of one's own, sends the text and
// variables as they are, decodes data and returns kernel errors as *Error.
func TestDoSendsTextAndDecodes(t *testing.T) {
	var got struct {
		Query     string
		Variables map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		if got.Variables["id"] == "ses_missing" {
			io.WriteString(w, `{"errors":[{"message":"session ses_missing not found","extensions":{"code":"NOT_FOUND"}}],"data":null}`)
			return
		}
		io.WriteString(w, `{"data":{"session":{"id":"ses_1","headSeq":7}}}`)
	}))
	defer srv.Close()
	c := client.New(srv.URL, "")
	const q = `query($id: ID!) { session(id: $id) { id headSeq } }`
	var out struct {
		Session struct {
			ID      string
			HeadSeq int
		}
	}
	if err := c.Do(t.Context(), q, map[string]any{"id": "ses_1"}, &out); err != nil {
		t.Fatal(err)
	}
	if got.Query != q || out.Session.ID != "ses_1" || out.Session.HeadSeq != 7 {
		t.Fatalf("sent %+v, decoded %+v", got, out)
	}
	err := c.Do(t.Context(), q, map[string]any{"id": "ses_missing"}, nil)
	if client.ErrorCode(err) != "NOT_FOUND" {
		t.Fatalf("error %v", err)
	}
}
