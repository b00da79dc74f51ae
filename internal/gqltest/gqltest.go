// Package gqltest holds the raw-HTTP helpers that the graph and edge tests
// share: a GraphQL answer as it came over the wire (status, bytes and the
// decoded data and errors), sending a request and posting a body to
// /graphql as is, a graphql-transport-ws message, and the sessionEvents
// subscription both packages read. It is imported by tests only; standard
// library only.
package gqltest

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// Error is one GraphQL error with its code.
type Error struct {
	Message    string `json:"message"`
	Extensions struct {
		Code string `json:"code"`
	} `json:"extensions"`
}

// Response is a GraphQL response body.
type Response struct {
	Data   json.RawMessage `json:"data"`
	Errors []Error         `json:"errors"`
}

// Reply is a raw HTTP answer of /graphql: its status, its bytes and the
// response they decode to.
type Reply struct {
	Status int
	Raw    []byte
	Response
}

// Codes are the error codes the kernel gives (core/errors.go).
var Codes = []string{"BAD_INPUT", "NOT_FOUND", "CONFLICT", "UNAVAILABLE", "PROVIDER_ERROR", "UNAUTHENTICATED", "INTERNAL", "RATE_LIMITED"}

// RequireCoded fails unless the reply is a GraphQL error list whose every
// error has a known code, and returns the first error.
func (r Reply) RequireCoded(t testing.TB, what string) Error {
	t.Helper()
	if len(r.Errors) == 0 {
		t.Fatalf("%s: status %d, no errors: %s", what, r.Status, r.Raw)
	}
	for _, e := range r.Errors {
		known := false
		for _, c := range Codes {
			known = known || e.Extensions.Code == c
		}
		if !known {
			t.Fatalf("%s: error without a known code: %s", what, r.Raw)
		}
	}
	return r.Errors[0]
}

// Send sends req and reads the answer, which must be JSON.
func Send(t testing.TB, req *http.Request) Reply {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := Reply{Status: resp.StatusCode, Raw: raw}
	if err := json.Unmarshal(raw, &r.Response); err != nil {
		t.Fatalf("%s %s: status %d, body is not JSON: %q", req.Method, req.URL, resp.StatusCode, raw)
	}
	return r
}

// PostRaw posts body as is to url (a /graphql endpoint), with contentType
// unless it is empty.
func PostRaw(t testing.TB, url, contentType string, body io.Reader) Reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return Send(t, req)
}

// WSMessage is one graphql-transport-ws message.
type WSMessage struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// Event is an event of SubscribeEvents as it arrives.
type Event struct {
	Seq       *int64  `json:"seq"`
	Type      string  `json:"type"`
	SessionID string  `json:"sessionId"`
	Delta     *string `json:"delta"`
	Message   *struct {
		Seq  int64  `json:"seq"`
		Text string `json:"text"`
	} `json:"message"`
}

// SubscribeEvents subscribes to a session's events after a seq, with the
// fields of Event.
const SubscribeEvents = `subscription($id: ID!, $after: Int) { sessionEvents(sessionId: $id, afterSeq: $after) { seq type sessionId delta message { seq text } } }`
