package httpwire

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/foya-dev/foya/plugins/sdk"
)

func TestDecodeState(t *testing.T) {
	type state struct {
		Items []json.RawMessage `json:"items"`
	}
	if s := DecodeState[state](nil); s.Items != nil {
		t.Errorf("empty: %v", s)
	}
	if s := DecodeState[state]([]byte(`{"items":[{"a":1}],`)); s.Items != nil {
		t.Errorf("malformed: %v", s)
	}
	if s := DecodeState[state]([]byte(`{"items":[{"a":1}]}`)); len(s.Items) != 1 || string(s.Items[0]) != `{"a":1}` {
		t.Errorf("ours: %v", s)
	}
}

func TestMarshalKeepsBytes(t *testing.T) {
	if b := Marshal(map[string]string{"t": "<a> & b"}); string(b) != `{"t":"<a> & b"}` {
		t.Errorf("%s", b)
	}
	if NonEmpty(" \n") != "[no output]" || NonEmpty("x") != "x" {
		t.Error("NonEmpty")
	}
	m := sdk.Message{Role: sdk.RoleAssistant, Reasoning: "r", Content: []sdk.ContentPart{{Type: "text", Text: "t"}}}
	if got := AssistantText(m); got != "[my reasoning before the interruption]\nr\n[end of reasoning]\n\nt" {
		t.Errorf("AssistantText: %q", got)
	}
}

func TestDecodeEventAndClassifyBody(t *testing.T) {
	var v struct{ Type string }
	var e *sdk.Error
	if err := DecodeEvent("ping", []byte("{"), &v); !errors.As(err, &e) || e.Category != sdk.CategoryServer {
		t.Errorf("malformed: %v", err)
	}
	type apiErr struct{ Message string }
	object := func(status int, _ http.Header, a *apiErr) *sdk.Error {
		msg := ""
		if a != nil {
			msg = a.Message
		}
		return &sdk.Error{Category: sdk.CategoryBadRequest, Message: msg, StatusCode: status}
	}
	message := func(a *apiErr) string { return a.Message }
	if got := ClassifyBody(400, nil, []byte(`{"error":{"message":"bad field"}}`), object, message); got.Message != "bad field" {
		t.Errorf("object message: %q", got.Message)
	}
	if got := ClassifyBody(400, nil, []byte(`<html>oops</html>`), object, message); got.Message != "<html>oops</html>" {
		t.Errorf("body: %q", got.Message)
	}
	if got := ClassifyBody(404, nil, []byte(`{"error":{}}`), object, message); got.Message != "{\"error\":{}}" {
		t.Errorf("no message: %q", got.Message)
	}
}

func TestToolCallID(t *testing.T) {
	for _, id := range []string{"toolu_01A09q90qw90lq917835lq9", "call_abc-123"} {
		if got := ToolCallID(id, 64, IDRune); got != id {
			t.Errorf("%s changed to %s", id, got)
		}
	}
	a, b := ToolCallID("functions.read:0", 64, IDRune), ToolCallID("functions.read:1", 64, IDRune)
	if a == b || a != ToolCallID("functions.read:0", 64, IDRune) || !strings.HasPrefix(a, "functions_read_0_") {
		t.Fatalf("%s %s", a, b)
	}
	for _, r := range a {
		if !IDRune(r) {
			t.Fatalf("%s has %q", a, r)
		}
	}
	long := strings.Repeat("x", 60)
	if got := ToolCallID(long, 40, nil); len(got) > 40 || got == ToolCallID(long+"y", 40, nil) {
		t.Fatalf("%s (%d bytes)", got, len(got))
	}
	if got := ToolCallID("functions.read:0", 40, nil); got != "functions.read:0" {
		t.Fatalf("characters changed without a rule: %s", got)
	}
	if got := ToolCallID("é"+strings.Repeat("x", 50), 40, nil); len(got) > 40 || !utf8.ValidString(got) {
		t.Fatalf("%q", got)
	}
}
