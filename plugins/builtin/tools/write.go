package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
)

func writeInfo() sdk.Tool {
	return sdk.Tool{
		Name: "write",
		Description: "Write a file inside the project, replacing it if it exists and creating missing parent " +
			"directories. Prefer edit for changes to an existing file.",
		Schema: schema([]string{"path", "content"}, map[string]any{
			"path":    prop("string", "File path, relative to the project directory or absolute inside it."),
			"content": prop("string", "The complete new contents of the file."),
		}),
	}
}

func editInfo() sdk.Tool {
	return sdk.Tool{
		Name: "edit",
		Description: "Replace text in an existing file. old_string must match the file exactly, including " +
			"whitespace and indentation, and must occur exactly once unless replace_all is set; include enough " +
			"surrounding lines to make it unique. Read the file first.",
		Schema: schema([]string{"path", "old_string", "new_string"}, map[string]any{
			"path":        prop("string", "File path, relative to the project directory or absolute inside it."),
			"old_string":  prop("string", "The exact text to replace."),
			"new_string":  prop("string", "The text to put in its place; must differ from old_string."),
			"replace_all": prop("boolean", "Replace every occurrence instead of exactly one (default false)."),
		}),
	}
}

type writeInput struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

func (s *Set) write(ctx context.Context, c *call) (sdk.ToolResult, error) {
	var in writeInput
	if err := decode(c, &in); err != nil {
		return sdk.ToolResult{}, err
	}
	if in.Content == nil {
		return sdk.ToolResult{}, errors.New("content is missing")
	}
	_, rel, err := c.scope.resolve(in.Path)
	if err != nil {
		return sdk.ToolResult{}, err
	}
	if rel == "." {
		return sdk.ToolResult{}, fmt.Errorf("%s is the project directory, not a file", in.Path)
	}
	before, err := c.scope.readStateAt(rel, s.cfg.MaxFileBytes)
	if err != nil {
		return sdk.ToolResult{}, fmt.Errorf("%s: %w", rel, err)
	}
	after := stateOf([]byte(*in.Content))
	if before.exists && before.hash == after.hash {
		return sdk.ToolResult{Text: fmt.Sprintf("%s already has this content; nothing changed", rel)}, nil
	}
	if err := ctx.Err(); err != nil {
		return sdk.ToolResult{}, err
	}
	if err := c.scope.writeAt(rel, after.data); err != nil {
		return sdk.ToolResult{}, fmt.Errorf("write %s: %w", rel, err)
	}
	cs := newChangeSet(s.cfg)
	cs.add(rel, before, after)
	verb := "updated"
	if !before.exists {
		verb = "created"
	}
	return cs.result(sdk.ToolResult{Text: fmt.Sprintf("%s %s (%d bytes)", verb, rel, len(after.data))}), nil
}

type editInput struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

func (s *Set) edit(ctx context.Context, c *call) (sdk.ToolResult, error) {
	var in editInput
	if err := decode(c, &in); err != nil {
		return sdk.ToolResult{}, err
	}
	switch {
	case in.OldString == "":
		return sdk.ToolResult{}, errors.New("old_string is empty; use write to create or overwrite a file")
	case in.OldString == in.NewString:
		return sdk.ToolResult{}, errors.New("old_string and new_string are identical; nothing to change")
	}
	_, rel, err := c.scope.resolve(in.Path)
	if err != nil {
		return sdk.ToolResult{}, err
	}
	before, err := c.scope.readStateAt(rel, s.cfg.MaxFileBytes)
	switch {
	case err != nil:
		return sdk.ToolResult{}, fmt.Errorf("%s: %w", rel, err)
	case !before.exists:
		return sdk.ToolResult{}, fmt.Errorf("%s does not exist; use write to create it", rel)
	case before.data == nil:
		return sdk.ToolResult{}, fmt.Errorf("%s is %d bytes; edit handles files up to %d bytes", rel, before.size, s.cfg.MaxFileBytes)
	case bytes.IndexByte(before.data, 0) >= 0:
		return sdk.ToolResult{}, fmt.Errorf("%s is a binary file", rel)
	}
	content := string(before.data)
	oldS, newS := in.OldString, in.NewString
	n := strings.Count(content, oldS)
	if n == 0 && strings.Contains(content, "\r\n") && !strings.Contains(oldS, "\r\n") {
		// read shows lines without their CR; match the file's line endings.
		oldS, newS = strings.ReplaceAll(oldS, "\n", "\r\n"), strings.ReplaceAll(newS, "\n", "\r\n")
		n = strings.Count(content, oldS)
	}
	switch {
	case n == 0:
		return sdk.ToolResult{}, fmt.Errorf("old_string not found in %s", rel)
	case n > 1 && !in.ReplaceAll:
		return sdk.ToolResult{}, fmt.Errorf("old_string appears %d times in %s; add context or set replace_all", n, rel)
	}
	if in.ReplaceAll {
		content = strings.ReplaceAll(content, oldS, newS)
	} else {
		content = strings.Replace(content, oldS, newS, 1)
	}
	if err := ctx.Err(); err != nil {
		return sdk.ToolResult{}, err
	}
	after := stateOf([]byte(content))
	if err := c.scope.writeAt(rel, after.data); err != nil {
		return sdk.ToolResult{}, fmt.Errorf("write %s: %w", rel, err)
	}
	cs := newChangeSet(s.cfg)
	cs.add(rel, before, after)
	what := "1 occurrence"
	if n > 1 {
		what = fmt.Sprintf("%d occurrences", n)
	}
	return cs.result(sdk.ToolResult{Text: fmt.Sprintf("edited %s: replaced %s", rel, what)}), nil
}
