package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/foya-dev/foya/core"
)

// GeneralAgent is the built-in general-purpose agent.
var GeneralAgent = core.AgentSnapshot{
	Name:         "general",
	Description:  "A general-purpose agent for research and multi-step tasks.",
	Instructions: "You are a sub-agent. Do the task you are given with the tools you have, then reply with a complete, self-contained answer: it is all the parent agent will see.",
	MaxTurns:     30,
}

// agentDir is where a project keeps its agent definitions: one Markdown file
// per agent, with a front matter block:
//
//	---
//	name: reviewer
//	description: Reviews a change for bugs.
//	tools: read, grep, glob
//	max_turns: 10
//	model: conn_…/gpt-4.1-mini
//	---
//	The instructions, in Markdown.
const agentDir = ".foya/agents"

var agentNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Agents lists the agents a session may start: the built-in general one and
// the project's definitions.
func (e *Engine) Agents(ctx context.Context, s core.Session) ([]core.AgentSnapshot, error) {
	out := []core.AgentSnapshot{GeneralAgent}
	if s.ProjectID == "" {
		return out, nil
	}
	p, err := e.svc.Project(ctx, s.ProjectID)
	if err != nil {
		return nil, err
	}
	files, _ := filepath.Glob(filepath.Join(p.Path, agentDir, "*.md"))
	slices.Sort(files)
	for _, f := range files {
		a, err := parseAgentFile(f)
		if err != nil {
			e.log.Warn("skip agent definition", "file", f, "err", err)
			continue
		}
		if i := slices.IndexFunc(out, func(x core.AgentSnapshot) bool { return x.Name == a.Name }); i >= 0 {
			out[i] = a // a project may redefine general
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

func parseAgentFile(path string) (core.AgentSnapshot, error) {
	data, err := readCapped(path, 64<<10)
	if err != nil {
		return core.AgentSnapshot{}, err
	}
	fields, body, err := parseFrontMatter(string(data))
	if err != nil {
		return core.AgentSnapshot{}, err
	}
	a := core.AgentSnapshot{Name: strings.TrimSuffix(filepath.Base(path), ".md"), Instructions: strings.TrimSpace(body)}
	if v, ok := fields["name"]; ok {
		a.Name = v
	}
	a.Description, a.Model = fields["description"], fields["model"]
	for _, t := range strings.Split(fields["tools"], ",") {
		if t = strings.TrimSpace(t); t != "" {
			a.Tools = append(a.Tools, t)
		}
	}
	if v := fields["max_turns"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return core.AgentSnapshot{}, fmt.Errorf("max_turns %q: a positive number", v)
		}
		a.MaxTurns = n
	}
	if !agentNameRe.MatchString(a.Name) {
		return core.AgentSnapshot{}, fmt.Errorf("name %q: lowercase letters, digits, - and _", a.Name)
	}
	return a, nil
}

// parseFrontMatter splits a Markdown file into its "key: value" front
// matter (between --- lines at the top, optional; it may be empty) and its
// body. The closing --- is a line of its own.
func parseFrontMatter(text string) (map[string]string, string, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	fields := map[string]string{}
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return fields, text, nil
	}
	for rest != "" {
		line, next, _ := strings.Cut(rest, "\n")
		rest = next
		if strings.TrimRight(line, " \t") == "---" {
			return fields, rest, nil
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return nil, "", fmt.Errorf("front matter is not closed with ---")
}

// allowedTool applies a child session's agent snapshot to a tool name.
func allowedTool(s core.Session, name string) bool {
	if s.Agent == nil {
		return true
	}
	if name == ToolTask {
		return false
	}
	return len(s.Agent.Tools) == 0 || slices.Contains(s.Agent.Tools, name)
}

// currentToolNames lists, sorted, every tool a child of s could be offered
// now: the kernel's tools but task, and the tools of the plugins and MCP
// servers in s's scope. An agent definition without a tools: list is
// frozen to it in the child's snapshot (SES-12). Kernel tools that depend
// on the configuration (web_search, image_generation, video_generation) are listed and still
// offered only when available.
func (e *Engine) currentToolNames(ctx context.Context, s core.Session) ([]string, error) {
	seen := map[string]bool{}
	for name := range kernelTools {
		if name != ToolTask {
			seen[name] = true
		}
	}
	if e.cfg.Tools != nil {
		infos, err := e.cfg.Tools.Tools(toolScope(ctx, e.svc, s))
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		for _, t := range infos {
			if t.Name != ToolTask {
				seen[t.Name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}
