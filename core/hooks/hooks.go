package hooks

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/foya-dev/foya/core"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Hook events, named as in Claude Code's settings.
const (
	HookSessionStart     = "SessionStart"
	HookUserPromptSubmit = "UserPromptSubmit"
	HookPreToolUse       = "PreToolUse"
	HookPostToolUse      = "PostToolUse"
	HookStop             = "Stop"
	HookSubagentStop     = "SubagentStop"
	HookPreCompact       = "PreCompact"
)

// HookEvents lists the events a hooks document may name.
var HookEvents = []string{HookSessionStart, HookUserPromptSubmit, HookPreToolUse, HookPostToolUse, HookStop, HookSubagentStop, HookPreCompact}

// HookCommand is one configured command.
type HookCommand struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	// Timeout is in seconds; 0 means core.DefaultHookTimeout.
	Timeout float64 `json:"timeout,omitempty"`
}

// HookMatcher groups commands under a tool-name regex (PreToolUse,
// PostToolUse); other events ignore the matcher.
type HookMatcher struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []HookCommand `json:"hooks"`
}

// HookConfig is a hooks document: event name → matchers.
type HookConfig map[string][]HookMatcher

// ParseHookConfig validates a hooks document in Claude Code's format. The
// error is BAD_INPUT and names the offending path.
func ParseHookConfig(raw []byte) (HookConfig, error) {
	bad := func(path, format string, args ...any) error {
		return &core.Error{Code: core.CodeBadInput, Message: "hooks" + path + ": " + fmt.Sprintf(format, args...)}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, bad("", "must be a JSON object of event name → matcher list")
	}
	// Accept a whole Claude Code settings object too ({"hooks": {...}}).
	if inner, ok := top["hooks"]; ok && len(top) == 1 {
		top = nil
		if err := json.Unmarshal(inner, &top); err != nil || top == nil {
			return nil, bad(".hooks", "must be a JSON object of event name → matcher list")
		}
	}
	cfg := HookConfig{}
	for ev, v := range top {
		p := "." + ev
		if !slices.Contains(HookEvents, ev) {
			return nil, bad(p, "unknown event %q; events are %s", ev, strings.Join(HookEvents, ", "))
		}
		var ms []json.RawMessage
		if err := json.Unmarshal(v, &ms); err != nil {
			return nil, bad(p, "must be a list of {matcher, hooks}")
		}
		for i, mraw := range ms {
			mp := fmt.Sprintf("%s[%d]", p, i)
			var m struct {
				Matcher *string           `json:"matcher"`
				Hooks   []json.RawMessage `json:"hooks"`
			}
			if err := json.Unmarshal(mraw, &m); err != nil {
				return nil, bad(mp, "must be an object {\"matcher\": string, \"hooks\": [...]}")
			}
			hm := HookMatcher{}
			if m.Matcher != nil {
				hm.Matcher = *m.Matcher
				if _, err := compileMatcher(hm.Matcher); err != nil {
					return nil, bad(mp+".matcher", "not a valid regular expression: %v", err)
				}
			}
			if len(m.Hooks) == 0 {
				return nil, bad(mp+".hooks", "must list at least one hook")
			}
			for j, hraw := range m.Hooks {
				hp := fmt.Sprintf("%s.hooks[%d]", mp, j)
				var h HookCommand
				if err := json.Unmarshal(hraw, &h); err != nil {
					return nil, bad(hp, "must be {\"type\": \"command\", \"command\": string, \"timeout\": seconds}")
				}
				if h.Type != "command" {
					return nil, bad(hp+".type", "must be \"command\" (got %q)", h.Type)
				}
				if strings.TrimSpace(h.Command) == "" {
					return nil, bad(hp+".command", "must not be empty")
				}
				if h.Timeout < 0 || time.Duration(h.Timeout*float64(time.Second)) > core.MaxHookTimeout {
					return nil, bad(hp+".timeout", "must be between 0 and %d seconds", int(core.MaxHookTimeout/time.Second))
				}
				hm.Hooks = append(hm.Hooks, h)
			}
			cfg[ev] = append(cfg[ev], hm)
		}
	}
	return cfg, nil
}

func compileMatcher(m string) (*regexp.Regexp, error) {
	if m == "" || m == "*" {
		return nil, nil
	}
	return regexp.Compile("^(?:" + m + ")$")
}

// Matches reports whether the matcher applies to tool (always for events
// without a tool).
func (m HookMatcher) Matches(tool string) bool {
	if tool == "" {
		return true
	}
	re, err := compileMatcher(m.Matcher)
	if err != nil {
		return false
	}
	return re == nil || re.MatchString(tool)
}

// ProjectHooksFile is a project's hooks document, relative to its root.
const ProjectHooksFile = ".foya/hooks.json"

// ProjectHooks is the state of a project's hooks file.
type ProjectHooks struct {
	Path    string
	Present bool
	// Trusted says the file's current content was trusted; Changed says
	// an earlier content was trusted and the file has changed since.
	Trusted, Changed bool
	Document         json.RawMessage
	hash             string
}

func hashHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ProjectState reads the hooks file of the project rooted at root.
func (h *Hooks) ProjectState(ctx context.Context, root string) (ProjectHooks, error) {
	ph := ProjectHooks{Path: filepath.Join(root, ProjectHooksFile)}
	data, err := os.ReadFile(ph.Path)
	if errors.Is(err, os.ErrNotExist) {
		return ph, nil
	}
	if err != nil {
		return ph, fmt.Errorf("read project hooks: %w", err)
	}
	ph.Present, ph.Document, ph.hash = true, data, hashHex(data)
	if h == nil || h.store == nil {
		return ph, nil
	}
	trust, err := h.store.LoadTrust(ctx)
	if err != nil {
		return ph, err
	}
	if t, ok := trust[root]; ok {
		ph.Trusted, ph.Changed = t == ph.hash, t != ph.hash
	}
	return ph, nil
}

// Trust records the current content of the project's hooks file as
// trusted; a later change needs trust again.
func (h *Hooks) Trust(ctx context.Context, root string) (ProjectHooks, error) {
	if h == nil || h.store == nil {
		return ProjectHooks{}, &core.Error{Code: core.CodeUnavailable, Message: "hooks are not configured on this kernel"}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ph, err := h.ProjectState(ctx, root)
	if err != nil {
		return ph, err
	}
	if !ph.Present {
		return ph, &core.Error{Code: core.CodeNotFound, Message: fmt.Sprintf("the project has no hooks file (%s)", ph.Path)}
	}
	if _, err := ParseHookConfig(ph.Document); err != nil {
		return ph, &core.Error{Code: core.CodeBadInput, Message: fmt.Sprintf("%s is not a valid hooks document: %s", ph.Path, core.ErrorMessage(err))}
	}
	trust, err := h.store.LoadTrust(ctx)
	if err != nil {
		return ph, err
	}
	if trust == nil {
		trust = map[string]string{}
	}
	trust[root] = ph.hash
	if err := h.store.SaveTrust(ctx, trust); err != nil {
		return ph, fmt.Errorf("save hook trust: %w", err)
	}
	ph.Trusted, ph.Changed = true, false
	return ph, nil
}

// Hooks holds the kernel-wide hooks document and runs its commands.
type Hooks struct {
	store  core.HookStore
	runner core.HookRunner
	mu     sync.Mutex
	// The document is read at every event (a hand edit applies at once);
	// its parse, with compiled matchers, is reused while the bytes match.
	parsedRaw []byte
	parsed    HookConfig
}

// New returns the hooks service; a nil runner means hooks are
// configured but never run.
func New(store core.HookStore, runner core.HookRunner) *Hooks {
	return &Hooks{store: store, runner: runner}
}

// Document returns the kernel-wide hooks document ({} when none).
func (h *Hooks) Document(ctx context.Context) (json.RawMessage, error) {
	if h == nil || h.store == nil {
		return json.RawMessage("{}"), nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	data, err := h.store.LoadHooks(ctx)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return json.RawMessage("{}"), nil
	}
	return data, nil
}

// SetDocument validates and saves the kernel-wide hooks document; it
// returns the normalised document.
func (h *Hooks) SetDocument(ctx context.Context, raw []byte) (json.RawMessage, error) {
	if h == nil || h.store == nil {
		return nil, &core.Error{Code: core.CodeUnavailable, Message: "hooks are not configured on this kernel"}
	}
	cfg, err := ParseHookConfig(raw)
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.store.SaveHooks(ctx, data); err != nil {
		return nil, fmt.Errorf("save hooks: %w", err)
	}
	return data, nil
}

// Config returns the kernel-wide hooks document parsed, reusing the last
// parse while the bytes match.
func (h *Hooks) Config(ctx context.Context) (HookConfig, error) {
	data, err := h.Document(ctx)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.parsed != nil && bytes.Equal(data, h.parsedRaw) {
		return h.parsed, nil
	}
	cfg, err := ParseHookConfig(data)
	if err != nil {
		return nil, err
	}
	h.parsedRaw, h.parsed = bytes.Clone(data), cfg
	return cfg, nil
}

// Runs reports whether hooks run at all (a runner is configured).
func (h *Hooks) Runs() bool { return h != nil && h.runner != nil }

// Run runs one hook command through the configured runner.
func (h *Hooks) Run(ctx context.Context, r core.HookRun) core.HookOutcome {
	return h.runner.RunHook(ctx, r)
}
