// Package tools is the built-in tool plugin: read, write, edit, bash, glob
// and grep over one scope directory per call (SES-3). It implements
// sdk.ToolSet; the kernel serves it out of process as `foya plugin tools`.
//
// Every path argument is resolved inside the call's ScopeDir; anything that
// resolves outside it, through "..", an absolute path or a symlink, is
// refused. Tools that change files report each change with its before and
// after bytes and sha256, plus a UI-only unified diff.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/foya-dev/foya/plugins/sandbox"
	"github.com/foya-dev/foya/plugins/sdk"
)

// Version is reported by Describe.
const Version = "0.1.0"

// Default limits; see Config.
const (
	DefaultMaxFileBytes       = 8 << 20
	DefaultMaxResultBytes     = 64 << 20
	DefaultSnapshotMaxFiles   = 5000
	DefaultSnapshotMaxBytes   = 256 << 20
	DefaultMaxOutputBytes     = 30000
	DefaultBashTimeout        = 120 * time.Second
	DefaultMaxBashTimeout     = 600 * time.Second
	DefaultMaxImageBytes      = 5 << 20
	DefaultReadLimit          = 2000
	DefaultMaxLineBytes       = 2000
	DefaultMaxReadOutputBytes = 256 << 10
	DefaultMaxGlobResults     = 200
	DefaultMaxGrepMatches     = 200
	DefaultMaxWalkEntries     = 100000
	DefaultMaxDiffBytes       = 1 << 20
)

// Config holds the logger and the limits; zero fields take the defaults.
type Config struct {
	Logger *slog.Logger
	// MaxFileBytes caps the bytes a file change carries per side (larger
	// files are reported by hash with TooLarge), the files edit will change
	// and grep will search.
	MaxFileBytes int64
	// MaxResultBytes caps the before+after bytes of one call's file changes.
	MaxResultBytes int64
	// SnapshotMaxFiles and SnapshotMaxBytes bound bash's change detection;
	// beyond either the detection is skipped and the result's Note says so.
	SnapshotMaxFiles int
	SnapshotMaxBytes int64
	// MaxOutputBytes caps bash output; the head and tail are kept.
	MaxOutputBytes int
	// DefaultBashTimeout applies when the call names none; MaxBashTimeout is
	// the most a call may ask for.
	DefaultBashTimeout time.Duration
	MaxBashTimeout     time.Duration
	MaxImageBytes      int64
	MaxGlobResults     int
	MaxGrepMatches     int

	// DataDir is the kernel's data directory: no tool reads, lists or
	// writes anything inside it, even when a project contains it, except a
	// session's own scratch directory under ScratchDir.
	DataDir    string
	ScratchDir string
	// Hidden are more files or directories no tool may touch (secrets kept
	// outside DataDir).
	Hidden []string
	// TempRoot holds one TMPDIR per session, <TempRoot>/<session id>;
	// empty means bash gets the plugin's own temporary directory.
	TempRoot string
	// Sandbox confines bash; nil runs it unconfined (tests, non-Linux).
	Sandbox *SandboxConfig
}

// SandboxConfig configures the confinement of bash (see package sandbox
// and docs/sandbox.md).
type SandboxConfig struct {
	// Executable serves the sandbox helper (`<exe> __sandbox POLICY`);
	// empty means os.Executable().
	Executable string
	// Writable are extra writable roots besides the session's directory,
	// its TMPDIR and /tmp (`foya serve --tool-writable`).
	Writable []string
	// Readable are extra roots bash calls may read besides the system
	// directories, their toolchains, the session's directory, its TMPDIR,
	// /tmp and the writable roots (`foya serve --tool-readable`).
	Readable []string
	// NetworkOff denies TCP connect and bind and gives commands an empty
	// network namespace (`foya serve --tool-network=off`).
	NetworkOff bool
	// Limits bound each bash call: processes, file size, CPU time and
	// address space per process (`foya serve --tool-max-*`); zero fields
	// are no limit.
	Limits sandbox.Limits
}

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	setDefault(&c.MaxFileBytes, DefaultMaxFileBytes)
	setDefault(&c.MaxResultBytes, DefaultMaxResultBytes)
	setDefault(&c.SnapshotMaxFiles, DefaultSnapshotMaxFiles)
	setDefault(&c.SnapshotMaxBytes, DefaultSnapshotMaxBytes)
	setDefault(&c.MaxOutputBytes, DefaultMaxOutputBytes)
	setDefault(&c.DefaultBashTimeout, DefaultBashTimeout)
	setDefault(&c.MaxBashTimeout, DefaultMaxBashTimeout)
	setDefault(&c.MaxImageBytes, DefaultMaxImageBytes)
	setDefault(&c.MaxGlobResults, DefaultMaxGlobResults)
	setDefault(&c.MaxGrepMatches, DefaultMaxGrepMatches)
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Set is the built-in tool set.
type Set struct {
	cfg   Config
	log   *slog.Logger
	tools map[string]tool
	order []string

	sandboxOnce  sync.Once
	sandboxState sandboxState
}

var _ sdk.ToolSet = (*Set)(nil)

// tool is one tool: its description and its body. run returns a Go error for
// anything the model should read as a failed call.
type tool struct {
	info sdk.Tool
	run  func(ctx context.Context, c *call) (sdk.ToolResult, error)
}

// call is one tool call being run.
type call struct {
	req   sdk.ToolCallRequest
	scope *scope
	// outer is the caller's context before the request timeout applied: when
	// it is done the kernel has cancelled the call.
	outer context.Context
}

// New returns the built-in tool set.
func New(cfg Config) *Set {
	cfg.defaults()
	s := &Set{cfg: cfg, log: cfg.Logger, tools: map[string]tool{}}
	for _, t := range []tool{
		{readInfo(), s.read},
		{writeInfo(), s.write},
		{editInfo(), s.edit},
		{bashInfo(cfg), s.bash},
		{globInfo(cfg), s.glob},
		{grepInfo(cfg), s.grep},
	} {
		s.tools[t.info.Name] = t
		s.order = append(s.order, t.info.Name)
	}
	return s
}

// Describe lists the tools.
func (s *Set) Describe(context.Context) (sdk.ToolSetInfo, error) {
	st := s.sandbox()
	info := s.Listed()
	info.Sandbox, info.SandboxDetail = st.name, st.detail
	return info, nil
}

// Listed is Describe without the sandbox fields, known without probing the
// system: what the kernel registers before the plugin first runs.
func (s *Set) Listed() sdk.ToolSetInfo {
	info := sdk.ToolSetInfo{Version: Version}
	for _, name := range s.order {
		info.Tools = append(info.Tools, s.tools[name].info)
	}
	return info
}

// Call runs one tool call. Tool failures are results with IsError; the only
// Go error is the kernel's own cancellation, when nobody reads the result.
func (s *Set) Call(ctx context.Context, req sdk.ToolCallRequest) (sdk.ToolResult, error) {
	log := s.log.With("session_id", req.SessionID, "tool_call_id", req.ToolCallID, "tool", req.Name)
	t, ok := s.tools[req.Name]
	if !ok {
		return errorResult(fmt.Errorf("unknown tool %q (have %s)", req.Name, strings.Join(s.order, ", "))), nil
	}
	outer := ctx
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	sc, err := newScope(req.ScopeDir, s.cfg.DataDir, s.cfg.ScratchDir, s.cfg.Hidden)
	if err == nil {
		err = sc.open()
	}
	if err != nil {
		log.Warn("tool call without a usable scope", "err", err)
		return errorResult(err), nil
	}
	defer sc.close()
	start := time.Now()
	res, err := t.run(ctx, &call{req: req, scope: sc, outer: outer})
	if err != nil {
		if outer.Err() != nil {
			log.Info("tool call cancelled", "duration", time.Since(start))
			return sdk.ToolResult{}, fmt.Errorf("%s: %w", req.Name, context.Cause(outer))
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("timed out after %s", req.Timeout)
		}
		res = errorResult(err)
	}
	log.Info("tool call done", "duration", time.Since(start), "is_error", res.IsError, "file_changes", len(res.FileChanges))
	return sanitize(res), nil
}

func errorResult(err error) sdk.ToolResult {
	return sdk.ToolResult{Text: "error: " + err.Error(), IsError: true}
}

// sanitize makes every string valid UTF-8, which protobuf requires.
func sanitize(r sdk.ToolResult) sdk.ToolResult {
	r.Text = strings.ToValidUTF8(r.Text, "\uFFFD")
	r.Diff = strings.ToValidUTF8(r.Diff, "\uFFFD")
	r.Note = strings.ToValidUTF8(r.Note, "\uFFFD")
	for i := range r.FileChanges {
		r.FileChanges[i].Path = strings.ToValidUTF8(r.FileChanges[i].Path, "\uFFFD")
	}
	if r.Attachment != nil {
		r.Attachment.Name = strings.ToValidUTF8(r.Attachment.Name, "\uFFFD")
	}
	return r
}

// decode unmarshals a call's input into v.
func decode(c *call, v any) error {
	in := c.req.Input
	if len(in) == 0 {
		in = json.RawMessage("{}")
	}
	if err := json.Unmarshal(in, v); err != nil {
		return fmt.Errorf("invalid input for %s: %w", c.req.Name, err)
	}
	return nil
}

// schema builds a JSON object schema.
func schema(required []string, props map[string]any) json.RawMessage {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tool schema: %v", err)) // static data
	}
	return b
}

func prop(typ, desc string) map[string]any { return map[string]any{"type": typ, "description": desc} }
