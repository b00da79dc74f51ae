package responses_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/openai/openaitest"
	"github.com/foya-dev/foya/providers/responses"
)

// Every recorded non-streamed answer of the real services (testdata/
// recorded/*.json: OpenAI, Azure, xAI and LM Studio response objects with
// messages, reasoning, function calls and the items of server tools, and
// two error bodies) read as a short completion: a response's text is its
// messages' output_text, its finish reason tool_calls when it calls a
// function, its usage the service's; an error body is its class.
func TestCompleteRecorded(t *testing.T) {
	files, _ := filepath.Glob("testdata/recorded/*.json")
	if len(files) < 40 {
		t.Fatalf("%d recordings", len(files))
	}
	p := responses.New(responses.Config{})
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var want struct {
			Output []struct {
				Type    string
				Content []struct{ Type, Text string }
			}
			Error *struct{ Code, Type string }
			Usage struct {
				InputTokens  int64 `json:"input_tokens"`
				OutputTokens int64 `json:"output_tokens"`
			}
			Status string
		}
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		fake := openaitest.New(t)
		resp := openaitest.Response{Body: string(raw)}
		if want.Output == nil && want.Error != nil {
			resp.Status = 400
			if want.Error.Code == "insufficient_quota" {
				resp.Status = 429
			}
		}
		fake.Enqueue(resp)
		got, err := p.CompleteDetailed(context.Background(), sdk.Endpoint{BaseURL: fake.BaseURL()}, sdk.Request{Model: "m", Messages: []sdk.Message{{Role: sdk.RoleUser, Content: []sdk.ContentPart{{Type: "text", Text: "hi"}}}}})
		name := filepath.Base(f)
		if want.Output == nil && want.Error != nil {
			wantCat := sdk.CategoryBadRequest
			if want.Error.Code == "insufficient_quota" {
				wantCat = sdk.CategoryQuota
			}
			var se *sdk.Error
			if !errors.As(err, &se) || se.Category != wantCat {
				t.Errorf("%s: %v, want %s", name, err, wantCat)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var text strings.Builder
		finish := "stop"
		for _, it := range want.Output {
			switch it.Type {
			case "message":
				for _, c := range it.Content {
					if c.Type == "output_text" {
						text.WriteString(c.Text)
					}
				}
			case "function_call":
				finish = "tool_calls"
			}
		}
		if got.Text != text.String() || got.FinishReason != finish || got.Usage == nil || got.Usage.InputTokens != want.Usage.InputTokens || got.Usage.OutputTokens != want.Usage.OutputTokens {
			t.Errorf("%s: text %.60q finish %q usage %+v; want %.60q %q %+v", name, got.Text, got.FinishReason, got.Usage, text.String(), finish, want.Usage)
		}
	}
}
