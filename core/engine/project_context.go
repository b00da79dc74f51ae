package engine

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Project context read into the system prompt (SES-3), each file capped:
//
//   - rules: AGENTS.md and CLAUDE.md at the project root, 64 KiB each;
//   - memory: .foya/MEMORY.md, 16 KiB — durable notes the user (or the model,
//     with the write tool) keeps for later sessions;
//   - skills: .foya/skills/NAME/SKILL.md with a front matter of name and
//     description — only the list (name, description, path) is sent; the
//     model reads a skill's file when it needs it.
var projectRulesFiles = []string{"AGENTS.md", "CLAUDE.md"}

const (
	maxRulesBytes  = 64 << 10
	maxMemoryBytes = 16 << 10
	memoryFile     = ".foya/MEMORY.md"
	skillsGlob     = ".foya/skills/*/SKILL.md"
	maxSkills      = 50
)

// projectContext renders the project's rules, memory and skills, read from
// dir, the session's working directory. In a git worktree (fallback is then
// the project's directory) a rules or memory file the worktree lacks, e.g.
// one never committed, is read from the project's directory.
func (e *Engine) projectContext(dir, fallback string) string {
	var b strings.Builder
	read := func(name string, n int64) ([]byte, error) {
		data, err := readCapped(filepath.Join(dir, name), n)
		if err != nil && fallback != "" {
			data, err = readCapped(filepath.Join(fallback, name), n)
		}
		return data, err
	}
	for _, name := range projectRulesFiles {
		if data, err := read(name, maxRulesBytes); err == nil && len(data) > 0 {
			fmt.Fprintf(&b, "\nProject rules from %s:\n%s\n", name, data)
		}
	}
	if data, err := read(memoryFile, maxMemoryBytes); err == nil && len(data) > 0 {
		fmt.Fprintf(&b, "\nProject memory (%s; keep it current with the write or edit tools when you learn something durable):\n%s\n", memoryFile, data)
	}
	files, _ := filepath.Glob(filepath.Join(dir, skillsGlob))
	slices.Sort(files)
	var skills []string
	for _, f := range files {
		if len(skills) == maxSkills {
			break
		}
		data, err := readCapped(f, 8<<10)
		if err != nil {
			continue
		}
		fields, _, err := parseFrontMatter(string(data))
		if err != nil {
			e.log.Warn("skip skill", "file", f, "err", err)
			continue
		}
		name := fields["name"]
		if name == "" {
			name = filepath.Base(filepath.Dir(f))
		}
		rel, _ := filepath.Rel(dir, f)
		skills = append(skills, fmt.Sprintf("- %s: %s (%s)", name, fields["description"], filepath.ToSlash(rel)))
	}
	if len(skills) > 0 {
		fmt.Fprintf(&b, "\nSkills of this project (read a skill's file before using it):\n%s\n", strings.Join(skills, "\n"))
	}
	return b.String()
}
