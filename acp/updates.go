package acp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
)

// The session/update notifications of messages, tool calls and the plan.

// message sends a complete message: on replay, or to complete what deltas
// did not stream (withText, withThought).
func (s *session) message(m gqlMessage, withText, withThought, replay bool) {
	switch strings.ToLower(m.Role) {
	case "user":
		if replay { // else the client shows its own prompts
			s.userMessage(m)
		}
	case "assistant":
		if withThought && m.Reasoning != nil && *m.Reasoning != "" {
			s.chunk("agent_thought_chunk", textBlock(*m.Reasoning))
		}
		if withText && m.Text != "" {
			s.chunk("agent_message_chunk", textBlock(m.Text))
		}
		for _, tc := range m.ToolCalls {
			s.mu.Lock()
			s.tools[tc.ID] = toolInfo{name: tc.Name, input: tc.Input}
			s.mu.Unlock()
			u := s.toolCall(tc.ID, tc.Name, tc.Input)
			u.SessionUpdate = "tool_call"
			s.update(u)
		}
	case "tool":
		s.toolResult(m)
	}
}

// userMessage replays a user message: its text and its attachments.
func (s *session) userMessage(m gqlMessage) {
	if m.Text != "" {
		s.chunk("user_message_chunk", textBlock(m.Text))
	}
	for _, at := range m.Attachments {
		s.chunk("user_message_chunk", s.attachmentBlock(at))
	}
}

// toolResult sends a tool message as the end of its call.
func (s *session) toolResult(m gqlMessage) {
	if m.ToolCallID == nil {
		return
	}
	s.mu.Lock()
	ti := s.tools[*m.ToolCallID]
	s.mu.Unlock()
	status := "completed"
	if m.IsError {
		status = "failed"
	}
	u := toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: *m.ToolCallID, Status: status,
		Content: s.toolContent(m, ti)}
	if m.Text != "" {
		u.RawOutput = &rawOutput{Output: m.Text, IsError: m.IsError}
	}
	s.update(u)
}

// replay sends the history as session/update notifications.
func (s *session) replay(msgs []gqlMessage) {
	for _, m := range msgs {
		s.message(m, true, true, true)
	}
}

// toolCall is the ToolCall fields of a pending call: title, kind,
// locations, raw input.
func (s *session) toolCall(id, name string, input json.RawMessage) toolCall {
	var in map[string]any
	if len(input) > 0 {
		if err := json.Unmarshal(input, &in); err != nil {
			// Not an object: the call goes out without the fields read from it.
			s.a.log.Debug("acp: a tool call's input is not an object", "session_id", s.id, "tool", name, "err", err)
		}
	}
	str := func(k string) string { v, _ := in[k].(string); return v }
	u := toolCall{ToolCallID: id, Title: name, Kind: toolKind(name), Status: "pending"}
	if p := str("path"); p != "" {
		u.Locations = []toolCallLocation{{Path: s.abs(p)}}
		u.Title = name + " " + p
	}
	switch name {
	case "bash":
		u.Title = "bash: " + firstLine(str("command"), 120)
	case "grep", "glob":
		u.Title = name + " " + str("pattern")
	case "web_search":
		u.Title = "web search: " + firstLine(str("query"), 120)
	case "question":
		u.Title = "question: " + firstLine(str("question"), 120)
	case "tasks":
		u.Title = "update the task list"
	case "task":
		u.Title = "sub-agent: " + firstLine(str("description")+str("prompt"), 120)
	}
	if len(input) > 0 && string(input) != "null" {
		u.RawInput = input
	}
	return u
}

// toolKind maps a Foya tool to an ACP tool kind.
func toolKind(name string) string {
	switch name {
	case "read", "read_tool_result":
		return "read"
	case "edit", "write":
		return "edit"
	case "bash":
		return "execute"
	case "grep", "glob":
		return "search"
	case "web_search":
		return "fetch"
	case "tasks", "task":
		return "think"
	}
	return "other"
}

// toolContent is a tool result's content: its text and a diff per changed file.
func (s *session) toolContent(m gqlMessage, ti toolInfo) []toolCallContent {
	out := []toolCallContent{}
	diffs := map[string]bool{}
	if m.Diff != nil && *m.Diff != "" {
		for _, d := range parseUnifiedDiff(*m.Diff) {
			entry := diffContent{Type: "diff", Path: s.abs(d.path), NewText: d.newText}
			if !d.created {
				entry.OldText = &d.oldText
			}
			out = append(out, entry)
			diffs[s.abs(d.path)] = true
		}
	}
	if ti.name == "edit" && len(m.FileChanges) > 0 && !m.IsError {
		if in, ok := s.editInput(ti.input); ok && in.Path != "" && !diffs[s.abs(in.Path)] {
			out = append(out, diffContent{Type: "diff", Path: s.abs(in.Path), OldText: &in.OldString, NewText: in.NewString})
		}
	}
	if m.Text != "" {
		out = append(out, wrappedContent{Type: "content", Content: textBlock(m.Text)})
	}
	for _, at := range m.Attachments {
		out = append(out, wrappedContent{Type: "content", Content: s.attachmentBlock(at)})
	}
	return out
}

// maxACPImageBytes bounds an image a tool result carries to the client
// inline (base64 in one notification); a larger one, or any other file, is a
// link naming it.
const maxACPImageBytes = 4 << 20

// attachmentBlock is what a client gets of an attachment (a user's upload,
// or an image_generation or video_generation result): a raster image
// inline, read from the kernel's attachment route; anything else, or an
// image that cannot be read, a resource link with its name and type, whose
// URI names the attachment (foya-attachment:ID; foya attachments save ID
// writes its bytes).
func (s *session) attachmentBlock(at gqlAttachment) contentBlock {
	link := resourceLinkContent{Type: "resource_link", Name: at.Name, URI: "foya-attachment:" + url.PathEscape(at.ID), MimeType: at.MediaType}
	switch at.MediaType {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		return link
	}
	if at.ID == "" || at.Size <= 0 || at.Size > maxACPImageBytes {
		return link
	}
	var b bytes.Buffer
	if _, err := s.a.k.AttachmentTo(s.ctx, at.ID, &b); err != nil {
		s.a.log.Warn("acp: read a tool's image", "session_id", s.id, "attachment_id", at.ID, "err", err)
		return link
	}
	return imageContent{Type: "image", MimeType: at.MediaType, Data: base64.StdEncoding.EncodeToString(b.Bytes())}
}

// editInput is the edit tool's input.
type editInput struct {
	Path      string `json:"path"`
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
}

// editInput reads an edit call's input; false when it does not decode
// (the result then goes out without that diff).
func (s *session) editInput(input json.RawMessage) (editInput, bool) {
	var in editInput
	if err := json.Unmarshal(input, &in); err != nil {
		s.a.log.Debug("acp: decode an edit call's input", "session_id", s.id, "err", err)
		return in, false
	}
	return in, true
}

func (s *session) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(s.cwd, p)
}

func (s *session) sendPlan(tasks []gqlTask) {
	entries := make([]planEntry, 0, len(tasks))
	for _, t := range tasks {
		st := "pending"
		switch strings.ToLower(t.Status) {
		case "in_progress":
			st = "in_progress"
		case "done":
			st = "completed"
		}
		entries = append(entries, planEntry{Content: t.Text, Priority: "medium", Status: st})
	}
	s.update(planUpdate{SessionUpdate: "plan", Entries: entries})
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
