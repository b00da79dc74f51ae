package catalogfile_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/storage/catalogfile"
)

type lookup struct{}

func (lookup) Provider(kind string) (core.Provider, error) {
	if kind == "openai" {
		return nil, nil // validation only asks whether the kind exists
	}
	return nil, core.Errorf(core.CodeNotFound, "no provider %q", kind)
}

// TestCatalogSurvivesRestart runs the core service on the file store, then
// reopens both as a restarted kernel would.
func TestCatalogSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "foya")
	open := func() *catalog.Catalog {
		t.Helper()
		store, err := catalogfile.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		cat, err := catalog.New(ctx, catalog.Config{Store: store, Providers: lookup{}})
		if err != nil {
			t.Fatal(err)
		}
		return cat
	}
	cat := open()
	key := "sk-restart-secret"
	conn, err := cat.CreateConnection(ctx, core.ConnectionInput{
		Name: "OpenAI", BaseURL: "https://api.openai.com/v1", APIKey: &key,
		Models: []core.Model{{ID: "gpt", Capabilities: core.Capabilities{ImageInput: new(bool)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.SetDefaultModel(ctx, core.PurposeLanguage, &core.ModelRef{ConnectionID: conn.ID, Model: "gpt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.SetDefaultModel(ctx, core.PurposeGuardian, &core.ModelRef{ConnectionID: conn.ID, Model: "gpt"}); err != nil {
		t.Fatal(err)
	}

	again := open()
	if d, _ := again.Defaults(ctx); d.Guardian == nil || d.Guardian.Model != "gpt" {
		t.Fatalf("guardian default after restart: %+v", d.Guardian)
	}
	got, err := again.Connection(ctx, conn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.APIKey != key || got.Models[0].Capabilities.ImageInput == nil || *got.Models[0].Capabilities.ImageInput {
		t.Fatalf("reloaded connection differs: %v", got)
	}
	ref, err := again.ResolveSessionModel(ctx, "", "")
	if err != nil || ref.ConnectionID != conn.ID || ref.Model != "gpt" {
		t.Fatalf("default after restart = %+v, %v", ref, err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, catalogfile.FileName))
	if err != nil || !strings.Contains(string(raw), key) {
		t.Fatalf("the file must hold the key (it is the key store): %v", err)
	}
}
