package openai_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// A tool call id over 40 bytes (another provider's; OpenAI refuses longer
// ones) goes back shortened, the same for the call and its result; shorter
// ids keep every character.
func TestLongToolIDsShortened(t *testing.T) {
	long := "toolu_" + strings.Repeat("X", 50)
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.TextStream("m", "ok"))
	p := openai.New(openai.Config{})
	req := sdk.Request{Model: "m", Messages: []sdk.Message{
		{Role: sdk.RoleUser, Content: []sdk.ContentPart{{Type: "text", Text: "read"}}},
		{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: long, Name: "read", Input: json.RawMessage(`{}`)}, {ID: "functions.read:1", Name: "read", Input: json.RawMessage(`{}`)}}},
		{Role: sdk.RoleTool, ToolCallID: long, Content: []sdk.ContentPart{{Type: "text", Text: "A"}}},
		{Role: sdk.RoleTool, ToolCallID: "functions.read:1", Content: []sdk.ContentPart{{Type: "text", Text: "B"}}},
	}}
	if _, err := p.Stream(context.Background(), sdk.Endpoint{BaseURL: fake.BaseURL()}, req, &discard{}); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			ToolCallID string                `json:"tool_call_id"`
			ToolCalls  []struct{ ID string } `json:"tool_calls"`
		}
	}
	if err := json.Unmarshal(fake.LastRequest().Body, &body); err != nil {
		t.Fatal(err)
	}
	calls := body.Messages[1].ToolCalls
	if len(calls[0].ID) > 40 || calls[0].ID != body.Messages[2].ToolCallID || calls[1].ID != "functions.read:1" || body.Messages[3].ToolCallID != "functions.read:1" {
		t.Fatalf("%s", fake.LastRequest().Body)
	}
}

type discard struct{}

func (discard) Text(string) error                { return nil }
func (discard) Reasoning(string) error           { return nil }
func (discard) ToolCall(sdk.ToolCallDelta) error { return nil }
func (discard) Usage(sdk.Usage) error            { return nil }
func (discard) State([]byte) error               { return nil }
