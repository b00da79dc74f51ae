package catalog_test

import (
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
)

func TestResolveSessionModel(t *testing.T) {
	type setup struct {
		conns   []core.ConnectionInput
		defLang *core.ModelRef // ConnectionID is an index into conns as a string "0", "1"…
	}
	img := core.ConnectionInput{Name: "I", Type: core.ConnImage, BaseURL: "https://i.example", Models: catModels("img")}
	lang := func(name string, ms ...string) core.ConnectionInput {
		return core.ConnectionInput{Name: name, BaseURL: "https://" + name + ".example", Models: catModels(ms...)}
	}
	tests := []struct {
		name      string
		setup     setup
		connIndex string // "" = none, else index into conns
		model     string
		want      *core.ModelRef // ConnectionID as index
		code      core.Code
	}{
		{"explicit connection and model", setup{conns: []core.ConnectionInput{lang("a", "a1", "a2"), lang("b", "b1")}, defLang: &core.ModelRef{ConnectionID: "0", Model: "a1"}}, "1", "b1", &core.ModelRef{ConnectionID: "1", Model: "b1"}, ""},
		{"explicit connection, default model on it", setup{conns: []core.ConnectionInput{lang("a", "a1", "a2")}, defLang: &core.ModelRef{ConnectionID: "0", Model: "a2"}}, "0", "", &core.ModelRef{ConnectionID: "0", Model: "a2"}, ""},
		{"explicit connection, first model", setup{conns: []core.ConnectionInput{lang("a", "a1"), lang("b", "b1", "b2")}, defLang: &core.ModelRef{ConnectionID: "0", Model: "a1"}}, "1", "", &core.ModelRef{ConnectionID: "1", Model: "b1"}, ""},
		{"explicit unlisted model", setup{conns: []core.ConnectionInput{lang("a", "a1")}}, "0", "zz", nil, core.CodeBadInput},
		{"explicit connection without list accepts any model", setup{conns: []core.ConnectionInput{lang("a")}}, "0", "anything", &core.ModelRef{ConnectionID: "0", Model: "anything"}, ""},
		{"explicit connection without list needs a model", setup{conns: []core.ConnectionInput{lang("a")}}, "0", "", nil, core.CodeBadInput},
		{"explicit image connection", setup{conns: []core.ConnectionInput{img, lang("a", "a1")}}, "0", "img", nil, core.CodeBadInput},
		{"explicit unknown connection", setup{conns: []core.ConnectionInput{lang("a", "a1")}}, "9", "", nil, core.CodeBadInput},
		{"model only, found by order", setup{conns: []core.ConnectionInput{lang("a", "a1"), lang("b", "x"), lang("c", "x")}}, "", "x", &core.ModelRef{ConnectionID: "1", Model: "x"}, ""},
		{"model only, unknown", setup{conns: []core.ConnectionInput{lang("a", "a1")}}, "", "x", nil, core.CodeBadInput},
		{"language default", setup{conns: []core.ConnectionInput{lang("a", "a1"), lang("b", "b1")}, defLang: &core.ModelRef{ConnectionID: "1", Model: "b1"}}, "", "", &core.ModelRef{ConnectionID: "1", Model: "b1"}, ""},
		{"first language connection by order", setup{conns: []core.ConnectionInput{img, lang("a"), lang("b", "b1", "b2")}}, "", "", &core.ModelRef{ConnectionID: "2", Model: "b1"}, ""},
		{"language connections without models", setup{conns: []core.ConnectionInput{lang("a")}}, "", "", nil, core.CodeUnavailable},
		{"no language connection", setup{conns: []core.ConnectionInput{img}}, "", "", nil, core.CodeUnavailable},
		{"empty catalog", setup{}, "", "", nil, core.CodeUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, core.CatalogData{})
			var created []string
			for _, in := range tt.setup.conns {
				created = append(created, h.create(in).ID)
			}
			idOf := func(idx string) string {
				if idx == "" {
					return ""
				}
				i := int(idx[0] - '0')
				if i >= len(created) {
					return "conn_missing"
				}
				return created[i]
			}
			if d := tt.setup.defLang; d != nil {
				if _, err := h.cat.SetDefaultModel(h.ctx, core.PurposeLanguage, &core.ModelRef{ConnectionID: idOf(d.ConnectionID), Model: d.Model}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := h.cat.ResolveSessionModel(h.ctx, idOf(tt.connIndex), tt.model)
			if tt.code != "" {
				wantCatCode(t, err, tt.code)
				if tt.name == "no language connection" && !strings.Contains(core.ErrorMessage(err), "no language connection configured; create one with createConnection") {
					t.Fatalf("message = %q", core.ErrorMessage(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := core.ModelRef{ConnectionID: idOf(tt.want.ConnectionID), Model: tt.want.Model}
			if got != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestEndpointResolvesEnvKey(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	in := validConnInput()
	in.APIKey = catPtr("env:FOYA_TEST_API_KEY")
	c := h.create(in)
	lit := validConnInput()
	lit.APIKey = catPtr("sk-literal")
	l := h.create(lit)

	t.Run("literal", func(t *testing.T) {
		ep, err := h.cat.Endpoint(h.ctx, l.ID)
		if err != nil || ep.APIKey != "sk-literal" || ep.BaseURL != l.BaseURL || ep.ProviderKind != "openai" {
			t.Fatalf("endpoint = %v, err = %v", ep, err)
		}
	})
	t.Run("env set at call time", func(t *testing.T) {
		t.Setenv("FOYA_TEST_API_KEY", "sk-from-env")
		ep, err := h.cat.Endpoint(h.ctx, c.ID)
		if err != nil || ep.APIKey != "sk-from-env" {
			t.Fatalf("err = %v, key matches = %v", err, ep.APIKey == "sk-from-env")
		}
		t.Setenv("FOYA_TEST_API_KEY", "sk-rotated")
		ep, _ = h.cat.Endpoint(h.ctx, c.ID)
		if ep.APIKey != "sk-rotated" {
			t.Fatal("env var is not read at call time")
		}
	})
	t.Run("env missing", func(t *testing.T) {
		_, err := h.cat.Endpoint(h.ctx, c.ID)
		wantCatCode(t, err, core.CodeUnavailable)
		if !strings.Contains(core.ErrorMessage(err), "FOYA_TEST_API_KEY") {
			t.Fatalf("message does not name the variable: %q", core.ErrorMessage(err))
		}
	})
	t.Run("env empty", func(t *testing.T) {
		t.Setenv("FOYA_TEST_API_KEY", "")
		_, err := h.cat.Endpoint(h.ctx, c.ID)
		wantCatCode(t, err, core.CodeUnavailable)
	})
	t.Run("unknown connection", func(t *testing.T) {
		_, err := h.cat.Endpoint(h.ctx, "conn_x")
		wantCatCode(t, err, core.CodeNotFound)
	})
	if !catalog.APIKeyConfigured(c) || catalog.APIKeyConfigured(core.Connection{}) {
		t.Fatal("APIKeyConfigured")
	}
}
