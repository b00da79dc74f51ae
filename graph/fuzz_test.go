package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// knownCodes are the extensions.code values a client may see.
var knownCodes = map[string]bool{
	"BAD_INPUT": true, "NOT_FOUND": true, "CONFLICT": true, "UNAVAILABLE": true,
	"PROVIDER_ERROR": true, "UNAUTHENTICATED": true, "INTERNAL": true, "RATE_LIMITED": true,
}

// fuzzRequestTimeout bounds one request: a request that takes longer is a
// hang. Generous, because the machine running the fuzzer may be loaded.
const fuzzRequestTimeout = 60 * time.Second

// FuzzGraphQLRequest sends one request with arbitrary bytes as its body and
// content type (POST, or GET with the bytes as the query string) through
// the real HTTP handler of a kernel with a real SQLite database. The
// response must arrive in time and whole, be JSON with data or errors, and
// every error must carry a known extensions.code.
func FuzzGraphQLRequest(f *testing.F) {
	k := newTestKernel(f)
	var prj struct {
		CreateProject struct{ ID string } `json:"createProject"`
	}
	k.mustDo(f, `mutation($p: String!) { createProject(input: {path: $p}) { id } }`, map[string]any{"p": f.TempDir()}, &prj)
	var ses struct {
		CreateSession struct{ ID string } `json:"createSession"`
	}
	k.mustDo(f, `mutation($p: ID) { createSession(input: {projectId: $p, title: "fuzz"}) { id } }`, map[string]any{"p": prj.CreateProject.ID}, &ses)
	sid := ses.CreateSession.ID

	js := "application/json"
	op := func(query string, vars map[string]any) []byte {
		b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		return b
	}
	for _, body := range [][]byte{
		op(`{ sessions { id title phase approvalMode } projects { id name path } connections { id } }`, nil),
		op(`query($s: ID!) { session(id: $s) { id title messages { seq role text } queue { id } } events(sessionId: $s, limit: 5) { seq type payload } }`, map[string]any{"s": sid}),
		op(`query($s: ID!) { events(sessionId: $s, afterSeq: -1, limit: 0) { seq } }`, map[string]any{"s": sid}),
		op(`mutation($s: ID!) { updateSession(id: $s, input: {title: "t\u202e"}) { id title } }`, map[string]any{"s": sid}),
		op(`mutation($s: ID!, $i: UserInput!) { sendMessage(sessionId: $s, input: $i) { __typename } }`, map[string]any{"s": sid, "i": map[string]any{"text": "", "attachmentIds": []string{"att_x"}}}),
		op(`mutation { createSession(input: {title: "x"}) { id } }`, nil),
		op(`mutation($s: ID!) { forkSession(sessionId: $s, afterSeq: 99) { id } }`, map[string]any{"s": sid}),
		op(`mutation { createConnection(input: {name: "", providerKind: "openai", baseUrl: "::", apiKey: "k"}) { id } }`, nil),
		op(`{ __schema { types { name fields { name } } } }`, nil),
		op(`{ a: sessions { id } b: sessions { id } ...F } fragment F on Query { c: usageTotals { __typename } }`, nil),
		op(`subscription { kernelEvents { type } }`, nil),
		op(`{ session(id: 1) { id } }`, map[string]any{"x": []any{1, "a", nil}}),
		[]byte(`{"query":"query A { projects { id } } query B { sessions { id } }","operationName":"C"}`),
		[]byte(`{"query":"{ projects { id } }","extensions":{"persistedQuery":{"version":1,"sha256Hash":"00"}}}`),
		[]byte(`{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"abc"}}}`),
		[]byte(`[{"query":"{ projects { id } }"}]`),
		[]byte(`{"query":"{ sessions { id } ","variables":"nope"}`),
		[]byte(`{"query": 1}`),
		[]byte(`{"query":"{ projects { id } }"} trailing`),
		[]byte("{\"query\":\"{ projects { id \xff } }\"}"),
		[]byte(`null`),
		[]byte(``),
	} {
		f.Add(uint8(0), js, body)
	}
	f.Add(uint8(0), "application/json; charset=utf-8", op(`{ projects { id } }`, nil))
	f.Add(uint8(0), "application/graphql-response+json", op(`{ projects { id } }`, nil))
	f.Add(uint8(0), "text/plain", op(`{ projects { id } }`, nil))
	f.Add(uint8(0), "", []byte(`{"query":"{ projects { id } }"}`))
	f.Add(uint8(0), "application/x-www-form-urlencoded", []byte(`query=%7B+projects+%7B+id+%7D+%7D`))
	f.Add(uint8(1), "", []byte(`query=%7B+projects+%7B+id+%7D+%7D`))
	f.Add(uint8(1), "", []byte(`query=mutation+%7B+deleteSession(id:%22x%22)+%7D`))
	f.Add(uint8(1), "", []byte(`query=%7B+projects+%7B+id+%7D+%7D&variables=%7B&extensions=1`))
	{
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		_ = mw.WriteField("operations", `{"query":"mutation($f: Upload!) { uploadAttachment(file: $f) { id } }","variables":{"f":null}}`)
		_ = mw.WriteField("map", `{"0":["variables.f"]}`)
		fw, _ := mw.CreateFormFile("0", "a.txt")
		_, _ = fw.Write([]byte("hello"))
		_ = mw.Close()
		f.Add(uint8(0), mw.FormDataContentType(), body.Bytes())
		f.Add(uint8(0), "multipart/form-data; boundary=x", []byte("--x\r\nContent-Disposition: form-data; name=\"map\"\r\n\r\n{}\r\n--x--\r\n"))
	}

	client := &http.Client{Timeout: fuzzRequestTimeout}
	f.Fuzz(func(t *testing.T, method uint8, contentType string, body []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), fuzzRequestTimeout)
		defer cancel()
		var req *http.Request
		var err error
		isGet := method%2 == 1
		if isGet {
			req, err = http.NewRequestWithContext(ctx, http.MethodGet, k.srv.URL+"/graphql?"+queryString(body), nil)
		} else {
			req, err = http.NewRequestWithContext(ctx, http.MethodPost, k.srv.URL+"/graphql", bytes.NewReader(body))
		}
		if err != nil {
			t.Skip("not an HTTP request:", err)
		}
		if contentType != "" {
			for _, c := range []byte(contentType) {
				if (c < 0x20 && c != '\t') || c == 0x7f {
					t.Skip("not a header value")
				}
			}
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("Accept", "application/json")
		checkResponse(t, client, req)
	})
}

// checkResponse sends req and checks the answer: in time and whole, JSON
// with data or errors, every error with a known extensions.code other than
// INTERNAL (client input must never cause an internal error or a resolver
// panic, which is presented as INTERNAL) and a non-empty UTF-8 message.
func checkResponse(t *testing.T, client *http.Client, req *http.Request) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("request failed (hang or aborted response): %v", err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("partial response (status %d, %d bytes): %v", resp.StatusCode, len(raw), err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "json") {
		t.Fatalf("status %d, content type %q, body %.300q", resp.StatusCode, ct, raw)
	}
	var out struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("status %d: body is not a GraphQL JSON response (%v): %.300q", resp.StatusCode, err, raw)
	}
	if len(out.Errors) == 0 {
		if len(out.Data) == 0 || string(out.Data) == "null" {
			t.Fatalf("status %d: neither data nor errors: %.300q", resp.StatusCode, raw)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d without errors: %.300q", resp.StatusCode, raw)
		}
		return
	}
	for _, e := range out.Errors {
		code, _ := e.Extensions["code"].(string)
		if !knownCodes[code] || code == "INTERNAL" {
			t.Fatalf("status %d: error without a known client-facing extensions.code (%q): %.500q", resp.StatusCode, code, raw)
		}
		if e.Message == "" || !utf8.ValidString(e.Message) {
			t.Fatalf("status %d: error message empty or not UTF-8: %.300q", resp.StatusCode, raw)
		}
	}
	if resp.StatusCode >= 500 {
		t.Fatalf("status %d for client input: %.300q", resp.StatusCode, raw)
	}
}

// FuzzGraphQLOperation is FuzzGraphQLRequest with the envelope kept valid:
// an arbitrary query document and variables (used when they are a JSON
// object) in a well-formed application/json POST, so the fuzzer spends its
// time in parsing, validation and the resolvers rather than in the JSON
// decoder. The same checks apply.
func FuzzGraphQLOperation(f *testing.F) {
	k := newTestKernel(f)
	var prj struct {
		CreateProject struct{ ID string } `json:"createProject"`
	}
	k.mustDo(f, `mutation($p: String!) { createProject(input: {path: $p}) { id } }`, map[string]any{"p": f.TempDir()}, &prj)
	var ses struct {
		CreateSession struct{ ID string } `json:"createSession"`
	}
	k.mustDo(f, `mutation($p: ID) { createSession(input: {projectId: $p, title: "fuzz"}) { id } }`, map[string]any{"p": prj.CreateProject.ID}, &ses)
	sid := ses.CreateSession.ID
	vars := func(m map[string]any) string {
		b, _ := json.Marshal(m)
		return string(b)
	}
	s := vars(map[string]any{"s": sid})
	for _, c := range [][2]string{
		{`{ sessions(includeChildren: true) { id title phase approvalMode parentId agent { name } route { connectionId } } }`, ``},
		{`query($s: ID!) { session(id: $s) { id title messages { seq role text attachments { id } } queue { id text } } }`, s},
		{`query($s: ID!) { events(sessionId: $s, afterSeq: 0, limit: 5000) { seq type at phase payload } }`, s},
		{`query($s: ID!, $n: Int) { events(sessionId: $s, afterSeq: $n, limit: $n) { seq } }`, vars(map[string]any{"s": sid, "n": -2147483648})},
		{`{ connections { id name models { id } } defaultModels { language { connectionId model } } plugins { name } usageTotals { inputTokens } projects { id path } }`, ``},
		{`mutation($s: ID!) { updateSession(id: $s, input: {title: "", approvalMode: BYPASS}) { id } }`, s},
		{`mutation($s: ID!, $t: String) { updateSession(id: $s, input: {title: $t}) { id title } }`, vars(map[string]any{"s": sid, "t": "a\u0000\u202e\u0085b"})},
		{`mutation($s: ID!, $i: UserInput!) { sendMessage(sessionId: $s, input: $i) { __typename } }`, vars(map[string]any{"s": sid, "i": map[string]any{"text": "hi", "command": "x", "browserElements": []any{map[string]any{"url": "file:"}}}})},
		{`mutation($s: ID!) { editQueuedMessage(sessionId: $s, itemId: "q", input: {text: "x"}) { id } moveQueuedMessage(sessionId: $s, itemId: "q", index: -1) { id } deleteQueuedMessage(sessionId: $s, itemId: "q") { id } }`, s},
		{`mutation($s: ID!) { forkSession(sessionId: $s, afterSeq: 0) { id } compactSession(sessionId: $s) { id } }`, s},
		{`mutation($s: ID!) { previewRewind(sessionId: $s, messageSeq: 1) { __typename } confirmRewind(sessionId: $s, messageSeq: 1, headSeq: 0, fileStateToken: "") { __typename } }`, s},
		{`mutation { createProject(input: {path: "relative/path"}) { id } }`, ``},
		{`mutation { createConnection(input: {name: "c", providerKind: "openai", baseUrl: "http://127.0.0.1:1/v1", apiKey: "k"}) { id } }`, ``},
		{`mutation { setDefaultModel(purpose: LANGUAGE, connectionId: "conn_x", model: "m") { __typename } reorderConnections(ids: ["a", "a"]) { id } }`, ``},
		{`mutation($s: ID!) { deleteSession(id: $s) }`, vars(map[string]any{"s": "ses_nope"})},
		{`query Q($a: Boolean = true) { sessions(includeChildren: $a) @include(if: $a) { id ... on Session { title } } __typename }`, `{"a": null}`},
		{`{ __type(name: "Session") { fields(includeDeprecated: true) { name args { name defaultValue } } } }`, ``},
		{`{ sessions { id } sessions { title } }`, `[]`},
		{`query { session(id: "\u0000") { id } }`, `{"s": 1e999}`},
	} {
		f.Add(c[0], c[1])
	}
	client := &http.Client{Timeout: fuzzRequestTimeout}
	f.Fuzz(func(t *testing.T, query, variables string) {
		env := map[string]any{"query": query}
		var v map[string]any
		if json.Unmarshal([]byte(variables), &v) == nil {
			env["variables"] = v
		}
		body, err := json.Marshal(env)
		if err != nil {
			t.Skip(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), fuzzRequestTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, k.srv.URL+"/graphql", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		checkResponse(t, client, req)
	})
}

// queryString makes arbitrary bytes a valid URL query: bytes a request line
// cannot carry, and % not followed by two hex digits, are percent-encoded;
// everything else (& = + and valid escapes) is sent as it is.
func queryString(b []byte) string {
	const hex = "0123456789ABCDEF"
	isHex := func(c byte) bool { return strings.IndexByte("0123456789abcdefABCDEF", c) >= 0 }
	var s strings.Builder
	for i, c := range b {
		switch {
		case c == '%' && i+2 < len(b) && isHex(b[i+1]) && isHex(b[i+2]):
			s.WriteByte(c)
		case c <= ' ' || c >= 0x7f || c == '#' || c == '%' || c == '"' || c == '<' || c == '>' || c == '\\' || c == '^' || c == '`' || c == '{' || c == '|' || c == '}':
			s.WriteByte('%')
			s.WriteByte(hex[c>>4])
			s.WriteByte(hex[c&15])
		default:
			s.WriteByte(c)
		}
	}
	return s.String()
}

// TestTransportErrorsCoded pins what the fuzzer found: errors written by the
// transports themselves carry a code and a JSON content type, and a
// subscription over plain POST is refused instead of blocking until its
// first event.
func TestTransportErrorsCoded(t *testing.T) {
	k := newTestKernel(t)
	cases := []struct {
		name, method, contentType, body string
		status                          int
		message                         string
	}{
		{"subscription over POST", http.MethodPost, "application/json", `{"query":"subscription { kernelEvents { type } }"}`, http.StatusOK, "subscriptions need a streaming transport"},
		{"unsupported content type", http.MethodPost, "text/plain", `{"query":"{ projects { id } }"}`, http.StatusUnsupportedMediaType, `needs Content-Type: application/json (multipart/form-data for uploads; add Accept: text/event-stream for SSE); got "text/plain"`},
		{"no content type", http.MethodPost, "", `{}`, http.StatusUnsupportedMediaType, `got "none"`},
		{"unserved method", http.MethodDelete, "", ``, http.StatusMethodNotAllowed, "got DELETE"},
		{"mutation over GET", http.MethodGet, "", `query=mutation%7BdeleteProject(id:"x")%7D`, http.StatusMethodNotAllowed, "GET runs queries only"},
		{"bad GET query string", http.MethodGet, "", `query=%7Bprojects%7Bid%7D%7D;x`, http.StatusBadRequest, "semicolon"},
		{"multipart without operations", http.MethodPost, "multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"map\"\r\n\r\n{}\r\n--b--\r\n", http.StatusUnprocessableEntity, "first part must be operations"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), fuzzRequestTimeout)
			defer cancel()
			u := k.srv.URL + "/graphql"
			var body io.Reader = strings.NewReader(tc.body)
			if tc.method == http.MethodGet {
				u, body = u+"?"+tc.body, nil
			}
			req, err := http.NewRequestWithContext(ctx, tc.method, u, body)
			if err != nil {
				t.Fatal(err)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out gqlResponse
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
				t.Errorf("status %d, content type %q; want %d, JSON", resp.StatusCode, resp.Header.Get("Content-Type"), tc.status)
			}
			if len(out.Errors) != 1 || out.Errors[0].Extensions.Code != "BAD_INPUT" || !strings.Contains(out.Errors[0].Message, tc.message) {
				t.Errorf("errors %+v, want one BAD_INPUT containing %q", out.Errors, tc.message)
			}
		})
	}
}

// TestFuzzFindingsCoded pins what FuzzGraphQLOperation found: client input
// that ended as INTERNAL.
func TestFuzzFindingsCoded(t *testing.T) {
	k := newTestKernel(t)
	var ses struct{ CreateSession struct{ ID string } }
	k.mustDo(t, `mutation { createSession(input: {title: "x"}) { id } }`, nil, &ses)

	// A nullable variable with a default, explicitly null, as an @include
	// or @skip condition panicked in gqlgen's field collection.
	for _, q := range []string{
		`query($a: Boolean = true) { sessions @include(if: $a) { id } }`,
		`query($a: Boolean = false) { ...F } fragment F on Query { sessions @skip(if: $a) { id } }`,
		`query($a: Boolean = true) { ... @include(if: $a) { projects { id } } }`,
	} {
		msg := k.mustFail(t, "BAD_INPUT", q, map[string]any{"a": nil})
		if !strings.Contains(msg, "needs a Boolean") {
			t.Errorf("%s: message %q", q, msg)
		}
	}
	var ok struct{ Sessions []struct{ ID string } }
	k.mustDo(t, `query($a: Boolean = true) { sessions @include(if: $a) { id } }`, map[string]any{}, &ok)
	if len(ok.Sessions) != 1 {
		t.Errorf("default condition: %+v", ok)
	}

	// A NUL in an id made bun write an invalid query on purpose (SQL error,
	// INTERNAL); now such an id is simply not found.
	k.mustFail(t, "NOT_FOUND", `{ events(sessionId: "ses_\u0000x") { seq } }`, nil)
	var got struct{ Session *struct{ ID string } }
	k.mustDo(t, `{ session(id: "\u0000") { id } }`, nil, &got)
	if got.Session != nil {
		t.Errorf("session with a NUL id: %+v", got.Session)
	}
	k.mustFail(t, "NOT_FOUND", `mutation { deleteSession(id: "ses_\u0000") }`, nil)
}
