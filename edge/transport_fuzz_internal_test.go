package edge

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// FuzzWSMessage: a graphql-transport-ws client message is either refused
// with a 4400 reason or is one of the client types with what that type
// needs (a non-empty id for subscribe and complete, an object payload for
// subscribe); parsing never panics.
func FuzzWSMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"connection_init"}`, `{"type":"connection_init","payload":{"authorization":"Bearer x"}}`,
		`{"type":"ping","payload":{"a":1}}`, `{"type":"pong"}`, `{"type":"complete","id":"1"}`,
		`{"type":"subscribe","id":"1","payload":{"query":"{ __typename }"}}`,
		`{"type":"subscribe","id":1}`, `{"type":"next"}`, `[]`, `null`, `{"type":null}`, `{"type":"ping","payload":[1]}`,
	} {
		f.Add([]byte(s), true)
	}
	f.Add([]byte{0xff, 0x00}, false)
	f.Fuzz(func(t *testing.T, data []byte, text bool) {
		typ := websocket.MessageBinary
		if text {
			typ = websocket.MessageText
		}
		m, reason := parseWSMessage(wsFrame{typ, data})
		if reason != "" {
			if !strings.HasPrefix(reason, "Invalid message received") || len(closeReason(reason)) > 123 {
				t.Fatalf("reason %q", reason)
			}
			return
		}
		switch m.Type {
		case "connection_init", "ping", "pong":
		case "subscribe", "complete":
			if m.ID == nil || *m.ID == "" {
				t.Fatalf("%s without id accepted: %q", m.Type, data)
			}
			if m.Type == "subscribe" && !bytes.HasPrefix(bytes.TrimSpace(m.Payload), []byte("{")) {
				t.Fatalf("subscribe payload %q accepted", m.Payload)
			}
		default:
			t.Fatalf("type %q accepted: %q", m.Type, data)
		}
	})
}

// FuzzHTTPParams: a POST body is a GraphQL request with a query (or
// extensions) or refused with a message; reading never panics.
func FuzzHTTPParams(f *testing.F) {
	for _, s := range []string{
		`{"query":"{ __typename }"}`, `{"query":"{ a }","variables":{"x":1},"operationName":"A","extensions":{}}`,
		`{"query":null}`, `{"query":0}`, `{"query":["a"]}`, `{"variables":"x","query":"{a}"}`, `[]`, `{}`, `{"query":"a"} x`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
		p, msg := readHTTPParams(r)
		if msg != "" {
			if p != nil {
				t.Fatal("params with a refusal")
			}
			return
		}
		if p.Query == "" && p.Extensions == nil {
			t.Fatalf("accepted without query: %q", body)
		}
		if !json.Valid([]byte(body)) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
	})
}

func TestResponseMedia(t *testing.T) {
	for accept, want := range map[string]string{
		"":                                  mediaJSON,
		"*/*":                               mediaJSON,
		"application/json":                  mediaJSON,
		"application/graphql-response+json": mediaGraphQLResponse,
		"application/graphql-response+json, application/json;q=0.9": mediaGraphQLResponse,
		"application/json, application/graphql-response+json":       mediaJSON,
		"application/json;q=0.5, application/graphql-response+json": mediaGraphQLResponse,
		"application/graphql-response+json;q=0, */*":                mediaJSON,
		"text/html": mediaJSON,
	} {
		var h []string
		if accept != "" {
			h = []string{accept}
		}
		if got := responseMedia(h); got != want {
			t.Errorf("Accept %q: %s, want %s", accept, got, want)
		}
	}
}
