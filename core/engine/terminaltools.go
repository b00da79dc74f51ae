package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/foya-dev/foya/core"
)

// The terminal tools drive the session's background terminals (the
// core.Terminals service in Config.Terminals, docs/terminals.md): a
// command started with terminal_start outlives the call and the turn; the
// model reads its output, writes to its input and kills it later.
const (
	ToolTerminalStart = "terminal_start"
	ToolTerminalRead  = "terminal_read"
	ToolTerminalWrite = "terminal_write"
	ToolTerminalKill  = "terminal_kill"
	ToolTerminalList  = "terminal_list"
)

// terminalReadBytes bounds the output one terminal_read returns.
const terminalReadBytes = 32 << 10

// isTerminalTool reports whether name is one of the terminal tools.
func isTerminalTool(name string) bool { return strings.HasPrefix(name, "terminal_") }

var terminalTools = map[string]kernelTool{
	ToolTerminalStart: {info: core.ToolInfo{Name: ToolTerminalStart, Action: "command",
		Description: "Start a long-running shell command in the background (a dev server, a watcher, a long build) with `bash -c`, " +
			"in the same sandbox as bash, and return its terminal id at once. It keeps running after this call and after the turn; " +
			"read its output with terminal_read, send input with terminal_write, end it with terminal_kill. Its output is kept up to 1 MiB (older output is dropped). " +
			"Use bash for commands that finish.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"The command line to run."},` +
			`"cwd":{"type":"string","description":"Working directory, relative to the session's directory (default: that directory)."},` +
			`"env":{"type":"object","additionalProperties":{"type":"string"},"description":"Extra environment variables."}},` +
			`"required":["command"],"additionalProperties":false}`)},
		run: runTerminalStart},
	ToolTerminalRead: {info: core.ToolInfo{Name: ToolTerminalRead, ReadOnly: true,
		Description: "Read a terminal's output after a byte offset (default 0: from the start of what is kept), at most 32 KiB per call; " +
			"waitMs (at most 10000) waits for new output when there is none yet. The result ends with the status and the nextOffset to pass next time.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"id":{"type":"string","description":"The terminal id."},` +
			`"afterOffset":{"type":"integer","minimum":0,"description":"Return output after this byte offset (the nextOffset of the previous read)."},` +
			`"waitMs":{"type":"integer","minimum":0,"maximum":10000,"description":"Wait up to this many milliseconds for new output."}},` +
			`"required":["id"],"additionalProperties":false}`)},
		run: runTerminalRead},
	ToolTerminalWrite: {info: core.ToolInfo{Name: ToolTerminalWrite, Action: "command",
		Description: "Write to a terminal's standard input (include \"\\n\" to end a line).",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"id":{"type":"string","description":"The terminal id."},` +
			`"input":{"type":"string","description":"The bytes to send."}},` +
			`"required":["id","input"],"additionalProperties":false}`)},
		run: runTerminalWrite},
	ToolTerminalKill: {info: core.ToolInfo{Name: ToolTerminalKill, Action: "command",
		Description: "End a terminal and every process it started: signal KILL (default), TERM, INT, HUP or QUIT.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"id":{"type":"string","description":"The terminal id."},` +
			`"signal":{"type":"string","enum":["KILL","TERM","INT","HUP","QUIT"],"description":"The signal (default KILL)."}},` +
			`"required":["id"],"additionalProperties":false}`)},
		run: runTerminalKill},
	ToolTerminalList: {info: core.ToolInfo{Name: ToolTerminalList, ReadOnly: true,
		Description: "List this session's terminals: id, status, command, exit code and output size.",
		Schema:      json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)},
		run: runTerminalList},
}

func init() {
	for name, t := range terminalTools {
		kernelTools[name] = t
	}
}

func runTerminalStart(ctx context.Context, e *Engine, s core.Session, c core.ToolCall) (string, bool) {
	var in struct {
		Command string            `json:"command"`
		Cwd     string            `json:"cwd"`
		Env     map[string]string `json:"env"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil {
		return "terminal_start: " + err.Error(), true
	}
	scope, err := e.dirs.workDir(context.WithoutCancel(ctx), s)
	if err != nil {
		return core.ErrorMessage(err), true
	}
	dir, why := terminalDir(&e.cfg, scope, in.Cwd)
	if why != "" {
		return why, true
	}
	t, err := e.cfg.Terminals.Start(context.WithoutCancel(ctx), core.TerminalStart{SessionID: s.ID, Command: in.Command, Dir: dir, ScopeDir: scope, Env: in.Env, ToolCallID: c.ID})
	if err != nil {
		return "terminal_start: " + core.ErrorMessage(err), true
	}
	return fmt.Sprintf("terminal %s started: `%s` in %s; it keeps running in the background. "+
		"Read its output with terminal_read {\"id\": %q, \"waitMs\": 2000}.", t.ID, t.Command, t.Cwd, t.ID), false
}

// terminalDir is the absolute working directory cwd names inside scope,
// or why it is refused.
func terminalDir(cfg *Config, scope, cwd string) (string, string) {
	if strings.TrimSpace(cwd) == "" {
		return scope, ""
	}
	c := core.ToolCall{Name: "read", Input: mustJSON(map[string]string{"path": cwd})}
	if why := cfg.scopeRefusal(scope, c); why != "" {
		return "", strings.Replace(why, "path", "cwd", 1)
	}
	dir := cwd
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(scope, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Sprintf("refused: cwd %s is not a directory of the session", cwd)
	}
	return filepath.Clean(dir), ""
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func runTerminalRead(ctx context.Context, e *Engine, s core.Session, c core.ToolCall) (string, bool) {
	var in struct {
		ID          string `json:"id"`
		AfterOffset int64  `json:"afterOffset"`
		WaitMs      int64  `json:"waitMs"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil || in.ID == "" {
		return "terminal_read: give the terminal \"id\" (terminal_list lists them)", true
	}
	out, err := e.cfg.Terminals.Read(ctx, s.ID, in.ID, in.AfterOffset, terminalReadBytes, time.Duration(in.WaitMs)*time.Millisecond)
	if err != nil {
		return "terminal_read: " + core.ErrorMessage(err), true
	}
	var b strings.Builder
	if out.Dropped > 0 {
		fmt.Fprintf(&b, "[%d bytes of older output were dropped]\n", out.Dropped)
	}
	b.WriteString(out.Text)
	if out.Text != "" && !strings.HasSuffix(out.Text, "\n") {
		b.WriteByte('\n')
	}
	if out.Text == "" {
		b.WriteString("(no new output)\n")
	}
	fmt.Fprintf(&b, "[terminal %s: %s; nextOffset %d", out.Terminal.ID, terminalState(out.Terminal), out.NextOffset)
	if out.More {
		b.WriteString("; more output follows: read again from nextOffset")
	}
	b.WriteString("]")
	return b.String(), false
}

func terminalState(t core.Terminal) string {
	switch {
	case t.Status == core.TerminalRunning:
		return "running"
	case t.ExitCode != nil && *t.ExitCode >= 0:
		return fmt.Sprintf("%s, exit code %d", t.Status, *t.ExitCode)
	default:
		return string(t.Status)
	}
}

func runTerminalWrite(ctx context.Context, e *Engine, s core.Session, c core.ToolCall) (string, bool) {
	var in struct {
		ID    string `json:"id"`
		Input string `json:"input"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil || in.ID == "" {
		return "terminal_write: give the terminal \"id\" and the \"input\"", true
	}
	if err := e.cfg.Terminals.Write(ctx, s.ID, in.ID, in.Input); err != nil {
		return "terminal_write: " + core.ErrorMessage(err), true
	}
	return fmt.Sprintf("wrote %d bytes to terminal %s", len(in.Input), in.ID), false
}

func runTerminalKill(ctx context.Context, e *Engine, s core.Session, c core.ToolCall) (string, bool) {
	var in struct {
		ID     string `json:"id"`
		Signal string `json:"signal"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil || in.ID == "" {
		return "terminal_kill: give the terminal \"id\"", true
	}
	t, err := e.cfg.Terminals.Kill(context.WithoutCancel(ctx), s.ID, in.ID, in.Signal)
	if err != nil {
		return "terminal_kill: " + core.ErrorMessage(err), true
	}
	return fmt.Sprintf("terminal %s: %s (%d bytes of output)", t.ID, terminalState(t), t.OutputBytes), false
}

func runTerminalList(_ context.Context, e *Engine, s core.Session, _ core.ToolCall) (string, bool) {
	ts := e.cfg.Terminals.List(s.ID)
	if len(ts) == 0 {
		return "no terminals in this session", false
	}
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%s  %s  %d bytes  %s  (cwd %s)\n", t.ID, terminalState(t), t.OutputBytes, t.Command, t.Cwd)
	}
	return strings.TrimSuffix(b.String(), "\n"), false
}
