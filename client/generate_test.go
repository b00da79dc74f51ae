package client_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/Khan/genqlient/generate"
)

// generated.go is what genqlient makes of ../schema.graphqls and
// operations.graphql today: after changing either, run go generate ./...
func TestGeneratedClientIsCurrent(t *testing.T) {
	cfg, err := generate.ReadAndValidateConfig("genqlient.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files, err := generate.Generate(cfg)
	if err != nil {
		t.Fatalf("genqlient: %v", err)
	}
	if len(files) == 0 {
		t.Fatal("genqlient generated nothing")
	}
	for path, want := range files {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go generate ./...)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./... and commit the result", filepath.Base(path))
		}
	}
}
