package deptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestImportEdges checks every package of the module against the table.
func TestImportEdges(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	cmd := exec.Command(goBin, "list", "-deps", "-json=ImportPath,Standard,Imports,Module", Module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []Package
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p Package
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	n := 0
	for _, p := range pkgs {
		if _, ok := relative(p); ok {
			n++
		}
	}
	if n < 20 {
		t.Fatalf("go list found %d packages of the module", n)
	}
	for _, v := range Check(pkgs, Rules) {
		t.Error(v)
	}
}

// The check fails on a forbidden edge, naming the package, the import and
// the rule; a package no rule governs fails too.
func TestCheckNamesTheEdge(t *testing.T) {
	mod := &struct{ Path string }{Module}
	ext := &struct{ Path string }{"github.com/uptrace/bun"}
	pkgs := []Package{
		{ImportPath: Module + "/core", Module: mod, Imports: []string{"fmt", Module + "/storage"}},
		{ImportPath: Module + "/storage", Module: mod, Imports: []string{Module + "/core", "github.com/uptrace/bun/migrate"}},
		{ImportPath: "github.com/uptrace/bun/migrate", Module: ext},
		{ImportPath: Module + "/providers/openai", Module: mod, Imports: []string{Module + "/core"}},
		{ImportPath: Module + "/nowhere", Module: mod},
		{ImportPath: "fmt", Standard: true},
	}
	got := Check(pkgs, Rules)
	var msgs []string
	for _, v := range got {
		msgs = append(msgs, v.String())
	}
	want := []string{
		`core imports storage, which breaks the rule for "core": core is the domain root: the standard library only`,
		`providers/openai imports core, which breaks the rule for "providers/...": providers import only plugins/sdk and providers/internal/... (never core, graph or storage)`,
		`nowhere: no rule in internal/deptest's table governs this package; add one`,
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}

func TestGoverningRule(t *testing.T) {
	for pkg, want := range map[string]string{
		"core": "core", "core/engine": "core/engine", "core/pubsub": "core/...", "edge/access": "edge/access", "edge/web": "edge/...",
		"providers/openai": "providers/...", "providers/openai/openaitest": "providers/*/*test", ".": ".",
		"test/e2e": "test/...", "graph": "graph",
	} {
		if r := governing(pkg, Rules); r == nil || r.Pkg != want {
			t.Errorf("%s: governed by %v, want %s", pkg, r, want)
		}
	}
}
