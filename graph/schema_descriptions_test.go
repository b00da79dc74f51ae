package graph_test

import (
	"os"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// undescribed lists every element of the schema document without a
// description: types, fields, arguments, input fields, enum values.
func undescribed(t testing.TB, sdl string) []string {
	doc, err := parser.ParseSchema(&ast.Source{Name: "schema.graphqls", Input: sdl})
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	check := func(defs ast.DefinitionList, extension bool) {
		for _, d := range defs {
			if !extension && blank(d.Description) {
				missing = append(missing, "type "+d.Name)
			}
			for _, f := range d.Fields {
				if blank(f.Description) {
					missing = append(missing, "field "+d.Name+"."+f.Name)
				}
				for _, a := range f.Arguments {
					if blank(a.Description) {
						missing = append(missing, "argument "+d.Name+"."+f.Name+"("+a.Name+")")
					}
				}
			}
			for _, v := range d.EnumValues {
				if blank(v.Description) {
					missing = append(missing, "enum value "+d.Name+"."+v.Name)
				}
			}
		}
	}
	check(doc.Definitions, false)
	check(doc.Extensions, true)
	for _, d := range doc.Directives {
		if blank(d.Description) {
			missing = append(missing, "directive @"+d.Name)
		}
		for _, a := range d.Arguments {
			if blank(a.Description) {
				missing = append(missing, "argument @"+d.Name+"("+a.Name+")")
			}
		}
	}
	return missing
}

// Every type, field, argument, input field, enum value and directive of
// schema.graphqls has a description (what it is, its units and bounds).
func TestSchemaIsDescribed(t *testing.T) {
	raw, err := os.ReadFile("../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	if missing := undescribed(t, string(raw)); len(missing) > 0 {
		t.Fatalf("%d schema elements without a description:\n  %s", len(missing), strings.Join(missing, "\n  "))
	}
}

// The check itself finds each kind of undescribed element.
func TestUndescribedFindsEachKind(t *testing.T) {
	got := undescribed(t, `
type T { f(a: Int): Int }
"d" input I { x: Int }
"d" enum E { A }
"d" directive @d(x: Int) on FIELD
`)
	want := []string{"type T", "field T.f", "argument T.f(a)", "field I.x", "enum value E.A", "argument @d(x)"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %v, want %v", got, want)
	}
}
