package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
)

// kernelTool is a tool the kernel itself implements, because it acts on the
// session rather than on files: questions to the person, the task list, and
// reading a large tool result back from canonical history.
type kernelTool struct {
	info core.ToolInfo
	run  func(ctx context.Context, e *Engine, s core.Session, c core.ToolCall) (text string, isError bool)
}

// Kernel tool names.
const (
	ToolQuestion = "question"
	ToolTasks    = "tasks"
)

var kernelTools = map[string]kernelTool{
	ToolQuestion: {
		info: core.ToolInfo{Name: ToolQuestion, ReadOnly: true,
			Description: "Ask the user a question and wait for the answer. Use it when you cannot proceed without their decision or information.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"question":{"type":"string","description":"The question, self-contained."}},"required":["question"],"additionalProperties":false}`)},
		run: runQuestion,
	},
	ToolTasks: {
		info: core.ToolInfo{Name: ToolTasks, ReadOnly: true,
			Description: "Replace the session's task list, to plan and track multi-step work. Send the whole list every time; status is pending, in_progress or done.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"tasks":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"text":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","done"]}},"required":["text","status"],"additionalProperties":false}}},"required":["tasks"],"additionalProperties":false}`)},
		run: runTasks,
	},
	ToolTask:      {info: taskToolInfo, run: nil},
	ToolWebSearch: {info: webSearchToolInfo, run: runWebSearch},
	// image_generation and video_generation are dispatched by runCall
	// (they return attachments).
	ToolImageGeneration: {info: imageGenerationToolInfo},
	ToolVideoGeneration: {info: videoGenerationToolInfo},
	session.ReadToolResultTool: {
		info: core.ToolInfo{Name: session.ReadToolResultTool, ReadOnly: true,
			Description: "Read part of a large tool result that was shortened in your context. seq is the event seq named in the shortened result; offset and length count characters.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"seq":{"type":"integer","minimum":1},"offset":{"type":"integer","minimum":0},"length":{"type":"integer","minimum":1,"maximum":100000}},"required":["seq"],"additionalProperties":false}`)},
		run: runReadToolResult,
	},
}

func init() {
	// runTask refers to kernelTools through Agents; set it here to avoid an
	// initialization cycle.
	t := kernelTools[ToolTask]
	t.run = runTask
	kernelTools[ToolTask] = t
}

func kernelToolInfo(name string) (core.ToolInfo, bool) {
	t, ok := kernelTools[name]
	return t.info, ok
}

func kernelToolSchemas(s core.Session, b boundModel) []core.ToolSchema {
	out := make([]core.ToolSchema, 0, len(kernelTools))
	for _, t := range kernelTools {
		if t.info.Name == ToolWebSearch && !webSearchAvailable(b) && !b.searchFallback {
			continue
		}
		if t.info.Name == ToolImageGeneration && !b.imageDefault || t.info.Name == ToolVideoGeneration && !b.videoDefault {
			continue
		}
		if isTerminalTool(t.info.Name) && !b.terminals {
			continue
		}
		if allowedTool(s, t.info.Name) {
			out = append(out, core.ToolSchema{Name: t.info.Name, Description: t.info.Description, Parameters: t.info.Schema})
		}
	}
	slices.SortFunc(out, func(a, b core.ToolSchema) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func runQuestion(ctx context.Context, e *Engine, s core.Session, c core.ToolCall) (string, bool) {
	var in struct {
		Question string `json:"question"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil || strings.TrimSpace(in.Question) == "" {
		return "question: give a non-empty \"question\" string", true
	}
	answer, ok := e.requests.ask(ctx, s.ID, c, in.Question)
	if !ok {
		return "no answer: the turn was stopped before the user answered", true
	}
	return answer, false
}

func runTasks(ctx context.Context, e *Engine, s core.Session, c core.ToolCall) (string, bool) {
	var in struct {
		Tasks []core.Task `json:"tasks"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil {
		return "tasks: " + err.Error(), true
	}
	for i := range in.Tasks {
		t := &in.Tasks[i]
		switch t.Status {
		case core.TaskPending, core.TaskInProgress, core.TaskDone:
		default:
			return fmt.Sprintf("tasks[%d].status %q: use pending, in_progress or done", i, t.Status), true
		}
		if strings.TrimSpace(t.Text) == "" {
			return fmt.Sprintf("tasks[%d].text: empty", i), true
		}
		if t.ID == "" {
			t.ID = fmt.Sprint(i + 1)
		}
	}
	if err := e.svc.SetTasks(context.WithoutCancel(ctx), s.ID, in.Tasks); err != nil {
		return core.ErrorMessage(err), true
	}
	done := 0
	for _, t := range in.Tasks {
		if t.Status == core.TaskDone {
			done++
		}
	}
	return fmt.Sprintf("task list updated: %d tasks, %d done", len(in.Tasks), done), false
}

func runReadToolResult(ctx context.Context, e *Engine, s core.Session, c core.ToolCall) (string, bool) {
	var in struct {
		Seq    int64 `json:"seq"`
		Offset int   `json:"offset"`
		Length int   `json:"length"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil || in.Seq <= 0 || in.Offset < 0 || in.Length < 0 {
		return "read_tool_result: give seq (≥ 1), and optionally offset (≥ 0) and length", true
	}
	if in.Length == 0 {
		in.Length = 20000
	}
	msgs, err := e.svc.Messages(context.WithoutCancel(ctx), s.ID, true)
	if err != nil {
		return core.ErrorMessage(err), true
	}
	i := slices.IndexFunc(msgs, func(m core.Message) bool { return m.Seq == in.Seq })
	if i < 0 || msgs[i].Role != core.RoleTool {
		return fmt.Sprintf("read_tool_result: no tool result with seq %d in this session", in.Seq), true
	}
	r := []rune(msgs[i].Text)
	if in.Offset >= len(r) {
		return fmt.Sprintf("read_tool_result: offset %d is past the end (%d characters)", in.Offset, len(r)), true
	}
	end := min(len(r), in.Offset+in.Length)
	return fmt.Sprintf("[characters %d–%d of %d]\n%s", in.Offset, end, len(r), string(r[in.Offset:end])), false
}
