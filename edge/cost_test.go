package edge

import (
	"testing"

	"github.com/vektah/gqlparser/v2"

	"github.com/foya-dev/foya/edge/web"
	"github.com/foya-dev/foya/graph"
)

// The playground's example operations and the queries clients send most
// fit well within the cost limit; the amplification shapes do not.
func TestCostOfKnownOperations(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	cost := func(src string, vars map[string]any) map[string]int64 {
		doc, errs := gqlparser.LoadQueryWithRules(schema, src, nil)
		if errs != nil {
			t.Fatalf("%v", errs)
		}
		out := map[string]int64{}
		for _, op := range doc.Operations {
			out[op.Name] = operationCost(op.SelectionSet, vars)
		}
		return out
	}
	for name, c := range cost(web.PlaygroundQuery, nil) {
		if c > MaxCost/10 {
			t.Errorf("playground operation %s costs %d", name, c)
		}
	}
	for src, want := range map[string]int64{
		`query Q { session(id: "s") { messages { text } } }`:                        202,
		`query Q { events(sessionId: "s", limit: 5000) { seq } }`:                   5001,
		`query Q { session(id: "s") { messages(last: 20) { seq } } }`:               22,
		`query Q { session(id: "s") { messages(first: 1000) { seq } } }`:            1002,
		`query Q($n: Int) { sessions(first: $n) { id } }`:                           11,
		`query Q { events(sessionId: "s") { seq type } }`:                           1001,
		`query Q($n: Int) { events(sessionId: "s", limit: $n) { seq } }`:            11,
		`query Q { __schema { types { name } } a: __type(name: "Query") { name } }`: 10100,
		`mutation Q { createProject(input: {path: "/tmp"}) { id } }`:                102,
	} {
		got := cost(src, map[string]any{"n": int64(10)})["Q"]
		if got != want {
			t.Errorf("%s: cost %d, want %d", src, got, want)
		}
	}
}
