package graph

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// SessionListServed counts the operations SessionList answered by hand
// (read by the external tests, package graph_test).
var SessionListServed = &sessionListServed

// FuzzAppendQuoted: appendQuoted writes any string as gqlgen's answer
// brings it to a client, graphql.MarshalString's bytes marshalled by
// encoding/json (as the transports marshal a response's data). Seeds in
// testdata/fuzz/FuzzAppendQuoted.
func FuzzAppendQuoted(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		var gq bytes.Buffer
		graphql.MarshalString(s).MarshalGQL(&gq)
		want, err := json.Marshal(json.RawMessage(gq.Bytes()))
		if err != nil {
			t.Skip("encoding/json refuses gqlgen's string:", err)
		}
		if got := appendQuoted(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}
