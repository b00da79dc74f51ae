package edge

import (
	"os"
	"slices"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

func TestSessionsOfOperation(t *testing.T) {
	raw, err := os.ReadFile("../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(raw)})
	cases := []struct {
		query string
		vars  map[string]any
		want  []string
	}{
		{`mutation($s: ID!) { sendMessage(sessionId: $s, input: {text: "x"}) { turnStarted } }`, map[string]any{"s": "ses_a"}, []string{"ses_a"}},
		{`mutation { deleteSession(id: "ses_b") }`, nil, []string{"ses_b"}},
		{`mutation($i: GenerateImageInput!) { generateImage(input: $i) { id } }`, map[string]any{"i": map[string]any{"prompt": "p", "sessionId": "ses_c"}}, []string{"ses_c"}},
		{`mutation { generateImage(input: {prompt: "p", sessionId: "ses_d"}) { id } }`, nil, []string{"ses_d"}},
		{`query { s: session(id: "ses_e") { id } sessions { id } }`, nil, []string{"ses_e"}},
		{`query { ...F } fragment F on Query { session(id: "ses_f") { id } }`, nil, []string{"ses_f"}},
		{`query { terminalOutput(sessionId: "ses_h", terminalId: "term_1") { text } }`, nil, []string{"ses_h"}},
		{`mutation { killTerminal(sessionId: "ses_i", terminalId: "term_1") { id } }`, nil, []string{"ses_i"}},
		{`mutation { deleteConnection(id: "conn_x") }`, nil, nil},
		{`query { events(sessionId: "ses_g") { seq } }`, nil, nil},
	}
	for _, c := range cases {
		doc, errs := gqlparser.LoadQueryWithRules(schema, c.query, nil)
		if errs != nil {
			t.Fatalf("%s: %v", c.query, errs)
		}
		oc := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: c.vars}
		if got := sessionsOf(oc); !slices.Equal(got, c.want) {
			t.Errorf("%s: sessions %v, want %v", c.query, got, c.want)
		}
	}
}
