package openai_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/openai"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// Every recorded non-streamed Chat Completions answer of the real services
// (testdata/recorded/*.json: OpenAI, Azure, DeepSeek, Mistral, xAI, Groq,
// Alibaba Qwen, Moonshot Kimi, Perplexity; text, reasoning, tool calls,
// JSON, citations) read as a short completion: its text is the first
// choice's content (reasoning apart), its finish reason the service's, its
// usage the service's.
func TestCompleteRecorded(t *testing.T) {
	files, _ := filepath.Glob("testdata/recorded/*.json")
	if len(files) < 20 {
		t.Fatalf("%d recordings", len(files))
	}
	p := openai.New(openai.Config{})
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var want struct {
			Choices []struct {
				Message struct {
					Content json.RawMessage
				}
				FinishReason string `json:"finish_reason"`
			}
			Usage struct {
				PromptTokens     int64 `json:"prompt_tokens"`
				CompletionTokens int64 `json:"completion_tokens"`
			}
		}
		if err := json.Unmarshal(raw, &want); err != nil || len(want.Choices) == 0 {
			t.Fatalf("%s: %v", f, err)
		}
		// A string, or parts (Mistral: thinking parts beside text).
		text := ""
		var parts []struct{ Type, Text string }
		if c := want.Choices[0].Message.Content; json.Unmarshal(c, &text) != nil && json.Unmarshal(c, &parts) == nil {
			for _, part := range parts {
				if part.Type == "text" || part.Type == "output_text" {
					text += part.Text
				}
			}
		}
		fake := openaitest.New(t)
		fake.Enqueue(openaitest.Response{Body: string(raw)})
		got, err := p.CompleteDetailed(context.Background(), sdk.Endpoint{BaseURL: fake.BaseURL()}, sdk.Request{Model: "m", Messages: []sdk.Message{{Role: sdk.RoleUser, Content: []sdk.ContentPart{{Type: "text", Text: "hi"}}}}})
		name := filepath.Base(f)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got.Text != text || got.FinishReason != want.Choices[0].FinishReason || got.Usage == nil || got.Usage.InputTokens != want.Usage.PromptTokens || got.Usage.OutputTokens != want.Usage.CompletionTokens {
			t.Errorf("%s: text %.60q finish %q usage %+v; want %.60q %q %+v", name, got.Text, got.FinishReason, got.Usage, text, want.Choices[0].FinishReason, want.Usage)
		}
	}
}
