package acp

import (
	"encoding/json"
	"testing"
)

// The typed wire messages write the bytes the agent wrote when it built
// maps (sorted keys, null and empty lists where it wrote them).
func TestWireBytes(t *testing.T) {
	old := "a\n"
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"initialize", initializeResponse{ProtocolVersion: 1, AgentCapabilities: agentCapabilities{LoadSession: true,
			PromptCapabilities: promptCapabilities{Image: true, EmbeddedContext: true}, McpCapabilities: mcpCapabilities{HTTP: true}},
			AuthMethods: []authMethod{}, AgentInfo: implementation{Name: "foya", Title: "Foya", Version: "v"}},
			`{"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"http":true,"sse":false},"promptCapabilities":{"audio":false,"embeddedContext":true,"image":true},"sessionCapabilities":{"close":{},"delete":{},"list":{},"resume":{}}},"agentInfo":{"name":"foya","title":"Foya","version":"v"},"authMethods":[],"protocolVersion":1}`},
		{"new session", newSessionResponse{SessionID: "s", Modes: modeState{CurrentModeID: "ask", AvailableModes: modes[:1]}},
			`{"modes":{"availableModes":[{"description":"Reads run; file writes and commands ask for permission.","id":"ask","name":"Ask"}],"currentModeId":"ask"},"sessionId":"s"}`},
		{"list", listSessionsResponse{Sessions: []sessionInfo{}}, `{"sessions":[]}`},
		{"list entry", sessionInfo{SessionID: "s", Cwd: "/w"}, `{"cwd":"/w","sessionId":"s"}`},
		{"chunk", sessionNotification{SessionID: "s", Update: contentChunk{SessionUpdate: "agent_message_chunk", Content: textBlock("hi")}},
			`{"sessionId":"s","update":{"content":{"text":"hi","type":"text"},"sessionUpdate":"agent_message_chunk"}}`},
		{"resource link", contentChunk{SessionUpdate: "user_message_chunk", Content: resourceLinkContent{Type: "resource_link", Name: "a b", URI: "foya-attachment:a%20b", MimeType: ""}},
			`{"content":{"mimeType":"","name":"a b","type":"resource_link","uri":"foya-attachment:a%20b"},"sessionUpdate":"user_message_chunk"}`},
		{"tool call", toolCall{SessionUpdate: "tool_call", ToolCallID: "c", Title: "read a", Kind: "read", Status: "pending",
			Locations: []toolCallLocation{{Path: "/w/a"}}, RawInput: json.RawMessage(`{ "path": "a" }`)},
			`{"kind":"read","locations":[{"path":"/w/a"}],"rawInput":{"path":"a"},"sessionUpdate":"tool_call","status":"pending","title":"read a","toolCallId":"c"}`},
		{"tool started", toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: "c", Status: "in_progress"},
			`{"sessionUpdate":"tool_call_update","status":"in_progress","toolCallId":"c"}`},
		{"tool result", toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: "c", Status: "completed", Content: []toolCallContent{}},
			`{"content":[],"sessionUpdate":"tool_call_update","status":"completed","toolCallId":"c"}`},
		{"tool result with content", toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: "c", Status: "failed",
			Content: []toolCallContent{
				diffContent{Type: "diff", Path: "/w/n", NewText: "x\n"},
				diffContent{Type: "diff", Path: "/w/a", OldText: &old, NewText: "b\n"},
				wrappedContent{Type: "content", Content: textBlock("out")},
			}, RawOutput: &rawOutput{Output: "out", IsError: true}},
			`{"content":[{"newText":"x\n","oldText":null,"path":"/w/n","type":"diff"},{"newText":"b\n","oldText":"a\n","path":"/w/a","type":"diff"},{"content":{"text":"out","type":"text"},"type":"content"}],"rawOutput":{"isError":true,"output":"out"},"sessionUpdate":"tool_call_update","status":"failed","toolCallId":"c"}`},
		{"plan", planUpdate{SessionUpdate: "plan", Entries: []planEntry{{Content: "t", Priority: "medium", Status: "pending"}}},
			`{"entries":[{"content":"t","priority":"medium","status":"pending"}],"sessionUpdate":"plan"}`},
		{"mode", currentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeID: "plan"}, `{"currentModeId":"plan","sessionUpdate":"current_mode_update"}`},
		{"permission", permissionRequest{SessionID: "s", Options: permissionOptions[:1], ToolCall: toolCall{ToolCallID: "c", Title: "bash: ls", Kind: "execute", Status: "pending"}},
			`{"options":[{"kind":"allow_once","name":"Allow once","optionId":"allow_once"}],"sessionId":"s","toolCall":{"kind":"execute","status":"pending","title":"bash: ls","toolCallId":"c"}}`},
		{"cancel", cancelRequest{RequestID: 3}, `{"requestId":3}`},
		{"prompt", promptResponse{StopReason: "end_turn"}, `{"stopReason":"end_turn"}`},
		{"empty", empty{}, `{}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", c.name, b, err, c.want)
		}
	}
}
