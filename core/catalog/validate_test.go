package catalog_test

import (
	"context"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
	"github.com/foya-dev/foya/core/engine"
)

func TestCreateConnectionValidation(t *testing.T) {
	caps := func(window, in, out *int64) []core.Model {
		return []core.Model{{ID: "m", Capabilities: core.Capabilities{ContextWindow: window, MaxInputTokens: in, MaxOutputTokens: out}}}
	}
	tests := []struct {
		name   string
		modify func(in *core.ConnectionInput)
		field  string // "" = valid
		want   string // substring of the message
	}{
		{"valid with defaults", func(in *core.ConnectionInput) {}, "", ""},
		{"valid without key", func(in *core.ConnectionInput) { in.APIKey = catPtr("") }, "", ""},
		{"valid video", func(in *core.ConnectionInput) {
			in.Type = core.ConnVideo
			in.VideoProtocol = catalog.VideoProtocolOpenAI
		}, "", ""},
		{"valid limits at the window", func(in *core.ConnectionInput) {
			in.Models = caps(catPtr(int64(100)), catPtr(int64(100)), catPtr(int64(100)))
		}, "", ""},
		{"valid limits without window", func(in *core.ConnectionInput) { in.Models = caps(nil, catPtr(int64(1e9)), nil) }, "", ""},
		{"valid env key", func(in *core.ConnectionInput) { in.APIKey = catPtr("env:MY_1_API_KEY") }, "", ""},
		{"empty name", func(in *core.ConnectionInput) { in.Name = "  " }, "input.name", "must not be empty"},
		{"unknown type", func(in *core.ConnectionInput) { in.Type = "audio" }, "input.type", `unknown connection type "audio"`},
		{"unknown auth kind", func(in *core.ConnectionInput) { in.AuthKind = "oauth" }, "input.authKind", `unknown auth kind "oauth"`},
		{"unknown provider kind", func(in *core.ConnectionInput) { in.ProviderKind = "acme" }, "input.providerKind", "no provider plugin serves"},
		{"video without protocol", func(in *core.ConnectionInput) { in.Type = core.ConnVideo }, "input.videoProtocol", "required for video connections"},
		{"video with unknown protocol", func(in *core.ConnectionInput) { in.Type = core.ConnVideo; in.VideoProtocol = "sora9" }, "input.videoProtocol", `unknown video protocol "sora9"`},
		{"protocol on language", func(in *core.ConnectionInput) { in.VideoProtocol = catalog.VideoProtocolOpenAI }, "input.videoProtocol", "only video connections"},
		{"negative context window", func(in *core.ConnectionInput) { in.Models = caps(catPtr(int64(-1)), nil, nil) }, "input.models[0].capabilities.contextWindow", "must not be negative"},
		{"negative max input", func(in *core.ConnectionInput) { in.Models = caps(nil, catPtr(int64(-5)), nil) }, "input.models[0].capabilities.maxInputTokens", "must not be negative"},
		{"negative max output", func(in *core.ConnectionInput) { in.Models = caps(nil, nil, catPtr(int64(-5))) }, "input.models[0].capabilities.maxOutputTokens", "must not be negative"},
		{"max input above window", func(in *core.ConnectionInput) { in.Models = caps(catPtr(int64(100)), catPtr(int64(101)), nil) }, "input.models[0].capabilities.maxInputTokens", "above the context window of 100"},
		{"max output above window", func(in *core.ConnectionInput) { in.Models = caps(catPtr(int64(100)), nil, catPtr(int64(200))) }, "input.models[0].capabilities.maxOutputTokens", "above the context window of 100"},
		{"empty base url", func(in *core.ConnectionInput) { in.BaseURL = "" }, "input.baseUrl", "must not be empty"},
		{"ftp base url", func(in *core.ConnectionInput) { in.BaseURL = "ftp://example.com" }, "input.baseUrl", "must be an http or https URL"},
		{"base url without scheme", func(in *core.ConnectionInput) { in.BaseURL = "api.openai.com/v1" }, "input.baseUrl", "must be an http or https URL"},
		{"base url without host", func(in *core.ConnectionInput) { in.BaseURL = "https:///v1" }, "input.baseUrl", "must be an http or https URL"},
		{"base url with credentials", func(in *core.ConnectionInput) { in.BaseURL = "https://user:pw@example.com" }, "input.baseUrl", "must not contain credentials"},
		{"empty model id", func(in *core.ConnectionInput) { in.Models = catModels("a", " ") }, "input.models[1].id", "must not be empty"},
		{"duplicate model id", func(in *core.ConnectionInput) { in.Models = catModels("a", "b", "a") }, "input.models[2].id", `duplicate model id "a"`},
		{"empty reasoning effort", func(in *core.ConnectionInput) {
			in.Models = []core.Model{{ID: "a", Capabilities: core.Capabilities{ReasoningEfforts: []string{"low", ""}}}}
		}, "input.models[0].capabilities.reasoningEfforts[1]", "must not be empty"},
		{"env key without name", func(in *core.ConnectionInput) { in.APIKey = catPtr("env:") }, "input.apiKey", "needs a variable name"},
		{"env PATH", func(in *core.ConnectionInput) { in.APIKey = catPtr("env:PATH") }, "input.apiKey", "^[A-Z][A-Z0-9_]*_API_KEY$"},
		{"env HOME", func(in *core.ConnectionInput) { in.APIKey = catPtr("env:HOME") }, "input.apiKey", "env:HOME is not allowed"},
		{"env AWS secret", func(in *core.ConnectionInput) { in.APIKey = catPtr("env:AWS_SECRET_ACCESS_KEY") }, "input.apiKey", "--allow-key-env"},
		{"env GitHub token", func(in *core.ConnectionInput) { in.APIKey = catPtr("env:GITHUB_TOKEN") }, "input.apiKey", "env:GITHUB_TOKEN is not allowed"},
		{"env lower-case api key", func(in *core.ConnectionInput) { in.APIKey = catPtr("env:openai_api_key") }, "input.apiKey", "is not allowed"},
		{"negative order", func(in *core.ConnectionInput) { in.Order = catPtr(-1) }, "input.order", "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, core.CatalogData{})
			in := validConnInput()
			tt.modify(&in)
			conn, err := h.cat.CreateConnection(h.ctx, in)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("valid input rejected: %v", err)
				}
				if conn.ID == "" || !strings.HasPrefix(conn.ID, "conn_") {
					t.Fatalf("bad id %q", conn.ID)
				}
				return
			}
			wantCatCode(t, err, core.CodeBadInput)
			msg := core.ErrorMessage(err)
			if !strings.Contains(msg, tt.field+": ") || !strings.Contains(msg, tt.want) {
				t.Fatalf("message %q does not name %s with %q", msg, tt.field, tt.want)
			}
			if h.store.saveCount() != 0 || h.changeCount() != 0 {
				t.Fatal("rejected input was saved or reported")
			}
		})
	}
}

func TestCreateConnectionDefaults(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	c := h.create(core.ConnectionInput{Name: " Local ", BaseURL: "http://localhost:1/v1"})
	if c.Type != core.ConnLanguage || c.ProviderKind != "openai" || c.AuthKind != core.AuthAPIKey {
		t.Fatalf("defaults not applied: %v", c)
	}
	if c.Name != "Local" || c.Models == nil || len(c.Models) != 0 || c.APIKey != "" {
		t.Fatalf("unexpected connection: %v", c)
	}
}

func TestValidationReportsEveryProblem(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	_, err := h.cat.CreateConnection(h.ctx, core.ConnectionInput{Type: "x", BaseURL: "nope"})
	msg := core.ErrorMessage(err)
	for _, field := range []string{"input.name", "input.type", "input.baseUrl"} {
		if !strings.Contains(msg, field) {
			t.Errorf("message %q misses %s", msg, field)
		}
	}
}

func TestUpdateConnectionValidation(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	c := h.create(validConnInput())
	_, err := h.cat.UpdateConnection(h.ctx, c.ID, core.ConnectionInput{BaseURL: "file:///etc"})
	wantCatCode(t, err, core.CodeBadInput)
	got, _ := h.cat.Connection(h.ctx, c.ID)
	if got.BaseURL != c.BaseURL {
		t.Fatal("rejected update changed the connection")
	}
	// A stored window makes a later limit above it invalid.
	win := []core.Model{{ID: "m1", Capabilities: core.Capabilities{ContextWindow: catPtr(int64(10)), MaxOutputTokens: catPtr(int64(11))}}}
	_, err = h.cat.UpdateConnection(h.ctx, c.ID, core.ConnectionInput{Models: win})
	wantCatCode(t, err, core.CodeBadInput)
	_, err = h.cat.UpdateConnection(h.ctx, "conn_missing", core.ConnectionInput{Name: "x"})
	wantCatCode(t, err, core.CodeNotFound)
}

func TestImageInputAllowed(t *testing.T) {
	tests := []struct {
		name string
		v    *bool
		want bool
	}{
		{"unknown", nil, true},
		{"declared yes", catPtr(true), true},
		{"declared no", catPtr(false), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := engine.ImageInputAllowed(core.Capabilities{ImageInput: tt.v}); got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// --allow-key-env widens the env: rule by name, and a stored reference the
// rule does not allow is never read.
func TestKeyEnvAllowList(t *testing.T) {
	ctx := context.Background()
	t.Setenv("GITHUB_TOKEN", "ghp-secret")
	store := &memStore{data: core.CatalogData{Connections: []core.Connection{{
		ID: "conn_old", Name: "old", Type: core.ConnLanguage, ProviderKind: "openai", AuthKind: core.AuthAPIKey,
		BaseURL: "https://evil.example/v1", APIKey: "env:GITHUB_TOKEN", Models: []core.Model{{ID: "m"}},
	}}}}
	lookup := fakeLookup{"openai": &fakeProvider{}}
	strict, err := catalog.New(ctx, catalog.Config{Store: store, Providers: lookup})
	if err != nil {
		t.Fatal(err)
	}
	_, err = strict.Endpoint(ctx, "conn_old")
	wantCatCode(t, err, core.CodeUnavailable)
	if msg := core.ErrorMessage(err); !strings.Contains(msg, "--allow-key-env GITHUB_TOKEN") || strings.Contains(msg, "ghp-secret") {
		t.Fatalf("message = %q", msg)
	}
	allowing, err := catalog.New(ctx, catalog.Config{Store: store, Providers: lookup, AllowKeyEnv: []string{"GITHUB_TOKEN"}})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := allowing.Endpoint(ctx, "conn_old")
	if err != nil || ep.APIKey != "ghp-secret" {
		t.Fatalf("endpoint = %v, %v", ep.APIKey, err)
	}
	in := validConnInput()
	in.APIKey = catPtr("env:GITHUB_TOKEN")
	if _, err := allowing.CreateConnection(ctx, in); err != nil {
		t.Fatalf("allowed name refused: %v", err)
	}
}
