package catalog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
)

const catSecret = "sk-very-secret-123"

func TestConnectionNeverShowsKey(t *testing.T) {
	conn := core.Connection{
		ID: "conn_1", Name: "OpenAI", Type: core.ConnLanguage, ProviderKind: "openai",
		BaseURL: "https://api.openai.com/v1", AuthKind: core.AuthAPIKey, APIKey: catSecret,
		Models: catModels("gpt"),
	}
	in := core.ConnectionInput{Name: "OpenAI", APIKey: catPtr(catSecret)}
	data := core.CatalogData{Connections: []core.Connection{conn}}
	type wrapper struct {
		Conn  core.Connection
		Conns []core.Connection
	}

	var logText, logJSON bytes.Buffer
	slog.New(slog.NewTextHandler(&logText, nil)).Info("x", "conn", conn, "input", in, "data", data)
	slog.New(slog.NewJSONHandler(&logJSON, nil)).Info("x", "conn", conn, "input", in, "data", data)

	outputs := map[string]string{
		"%v":          fmt.Sprintf("%v", conn),
		"%+v":         fmt.Sprintf("%+v", conn),
		"%#v":         fmt.Sprintf("%#v", conn),
		"%s":          fmt.Sprintf("%s", conn), //lint:ignore S1025 the %s verb itself is under test
		"pointer %+v": fmt.Sprintf("%+v", &conn),
		"nested %+v":  fmt.Sprintf("%+v", wrapper{Conn: conn, Conns: []core.Connection{conn}}),
		"input %+v":   fmt.Sprintf("%+v", in),
		"input %#v":   fmt.Sprintf("%#v", in),
		"data %+v":    fmt.Sprintf("%+v", data),
		"data %#v":    fmt.Sprintf("%#v", data),
		"slog text":   logText.String(),
		"slog json":   logJSON.String(),
	}
	for _, v := range []any{conn, []core.Connection{conn}, data} {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		outputs[fmt.Sprintf("json %T", v)] = string(raw)
	}
	for name, out := range outputs {
		t.Run(name, func(t *testing.T) {
			if strings.Contains(out, catSecret) || strings.Contains(out, "very-secret") {
				t.Fatalf("output shows the key: %s", out)
			}
		})
	}
	if !strings.Contains(fmt.Sprint(conn), "apiKey=[redacted]") {
		t.Fatalf("String does not say a key is configured: %s", conn)
	}
}

func TestCatalogErrorsNeverShowKey(t *testing.T) {
	h := newHarness(t, core.CatalogData{})
	// Validation errors of an input carrying a key.
	_, err := h.cat.CreateConnection(h.ctx, core.ConnectionInput{APIKey: catPtr(catSecret), BaseURL: "https://" + catSecret + "@host"})
	if err == nil || strings.Contains(err.Error(), catSecret) {
		t.Fatalf("validation error shows the key: %v", err)
	}
	// A provider that echoes the key in its error.
	in := validConnInput()
	in.ProviderKind = "lister"
	in.APIKey = catPtr(catSecret)
	c := h.create(in)
	h.listErr = &core.ProviderError{Category: core.ProviderAuth, Message: "Incorrect API key provided: " + catSecret}
	_, err = h.cat.RefreshModels(h.ctx, c.ID)
	if err == nil || strings.Contains(core.ErrorMessage(err), catSecret) {
		t.Fatalf("refresh error shows the key: %v", core.ErrorMessage(err))
	}
	// Env-key errors name the variable, never a value.
	t.Setenv("FOYA_REDACT_TEST_API_KEY", "")
	env := validConnInput()
	env.APIKey = catPtr("env:FOYA_REDACT_TEST_API_KEY")
	e := h.create(env)
	_, err = h.cat.Endpoint(h.ctx, e.ID)
	if err == nil || !strings.Contains(err.Error(), "FOYA_REDACT_TEST_API_KEY") {
		t.Fatalf("env error = %v", err)
	}
}
