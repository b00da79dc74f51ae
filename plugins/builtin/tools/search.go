package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/foya-dev/foya/plugins/sdk"
)

// maxGrepLine caps one matching line in grep output.
const maxGrepLine = 300

func globInfo(cfg Config) sdk.Tool {
	return sdk.Tool{
		Name: "glob",
		Description: fmt.Sprintf("Find files by name pattern inside the project, newest first (at most %d). "+
			"Patterns use *, ?, [...] within one path segment and ** for any number of directories, "+
			"e.g. \"**/*.go\" or \"src/**/test_*.py\". .git and node_modules are skipped.", cfg.MaxGlobResults),
		Schema: schema([]string{"pattern"}, map[string]any{
			"pattern": prop("string", "Glob pattern, relative to path."),
			"path":    prop("string", "Directory to search in (default: the project directory)."),
		}),
		ReadOnly: true,
	}
}

func grepInfo(cfg Config) sdk.Tool {
	return sdk.Tool{
		Name: "grep",
		Description: fmt.Sprintf("Search file contents with a regular expression (Go RE2 syntax) inside the "+
			"project. Prints `file:line: text` for each matching line (at most %d). Binary files, files over "+
			"%s, .git and node_modules are skipped.", cfg.MaxGrepMatches, sizeText(cfg.MaxFileBytes)),
		Schema: schema([]string{"pattern"}, map[string]any{
			"pattern":          prop("string", "Regular expression, Go RE2 syntax."),
			"path":             prop("string", "File or directory to search (default: the project directory)."),
			"glob":             prop("string", "Only search files matching this glob, e.g. \"*.go\" (file name) or \"src/**/*.ts\" (path)."),
			"case_insensitive": prop("boolean", "Ignore case (default false)."),
		}),
		ReadOnly: true,
	}
}

// globPattern matches slash paths segment by segment; "**" matches any
// number of segments.
type globPattern []string

func parseGlob(p string) (globPattern, error) {
	p = strings.TrimPrefix(filepath.ToSlash(p), "./")
	if p == "" {
		return nil, errors.New("pattern is empty")
	}
	if strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("pattern %q must be relative; use path to pick the directory", p)
	}
	var g globPattern
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return nil, fmt.Errorf("pattern %q must not contain ..", p)
		}
		if seg == "" || (seg == "**" && len(g) > 0 && g[len(g)-1] == "**") {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return nil, fmt.Errorf("pattern %q: %w", p, err)
		}
		g = append(g, seg)
	}
	return g, nil
}

func (g globPattern) match(rel string) bool { return matchSegs(g, strings.Split(rel, "/")) }

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegs(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// walkFiles calls fn for each regular file under base (skipping skipDirs,
// the hidden directories and symlinks) with its slash path relative to base; it stops after
// DefaultMaxWalkEntries entries and says so.
func walkFiles(ctx context.Context, base string, hidden []string, fn func(abs, rel string, d fs.DirEntry) error) (stopped bool, err error) {
	n := 0
	errStop := errors.New("stop")
	err = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == base {
				return err
			}
			return nil
		}
		if n++; n > DefaultMaxWalkEntries {
			stopped = true
			return errStop
		}
		if n%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if p != base && (skipDirs[d.Name()] || slices.Contains(hidden, p)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(base, p)
		if err != nil {
			return nil
		}
		return fn(p, filepath.ToSlash(rel), d)
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return stopped, err
}

// searchBase resolves the optional directory argument.
func searchBase(c *call, p string) (abs, rel string, err error) {
	if p == "" {
		p = "."
	}
	return c.scope.resolve(p)
}

// scopeRel joins a path relative to base (rel to the scope) into one
// relative to the scope.
func scopeRel(baseRel, rel string) string {
	if baseRel == "." {
		return rel
	}
	return baseRel + "/" + rel
}

type globInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

func (s *Set) glob(ctx context.Context, c *call) (sdk.ToolResult, error) {
	var in globInput
	if err := decode(c, &in); err != nil {
		return sdk.ToolResult{}, err
	}
	g, err := parseGlob(in.Pattern)
	if err != nil {
		return sdk.ToolResult{}, err
	}
	base, baseRel, err := searchBase(c, in.Path)
	if err != nil {
		return sdk.ToolResult{}, err
	}
	if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
		return sdk.ToolResult{}, fmt.Errorf("%s is not a directory", baseRel)
	}
	type hit struct {
		rel   string
		mtime time.Time
	}
	var hits []hit
	stopped, err := walkFiles(ctx, base, c.scope.hidden, func(_, rel string, d fs.DirEntry) error {
		if !g.match(rel) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		hits = append(hits, hit{scopeRel(baseRel, rel), fi.ModTime()})
		return nil
	})
	if err != nil {
		return sdk.ToolResult{}, err
	}
	sort.Slice(hits, func(i, j int) bool {
		if !hits[i].mtime.Equal(hits[j].mtime) {
			return hits[i].mtime.After(hits[j].mtime)
		}
		return hits[i].rel < hits[j].rel
	})
	var out strings.Builder
	if len(hits) == 0 {
		fmt.Fprintf(&out, "no files match %q\n", in.Pattern)
	}
	for i, h := range hits {
		if i == s.cfg.MaxGlobResults {
			fmt.Fprintf(&out, "[showing %d of %d matches, newest first; narrow the pattern]\n", i, len(hits))
			break
		}
		out.WriteString(h.rel + "\n")
	}
	if stopped {
		fmt.Fprintf(&out, "[search stopped after %d entries; pick a narrower path]\n", DefaultMaxWalkEntries)
	}
	return sdk.ToolResult{Text: out.String()}, nil
}

type grepInput struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	Glob            string `json:"glob"`
	CaseInsensitive bool   `json:"case_insensitive"`
}

func (s *Set) grep(ctx context.Context, c *call) (sdk.ToolResult, error) {
	var in grepInput
	if err := decode(c, &in); err != nil {
		return sdk.ToolResult{}, err
	}
	if in.Pattern == "" {
		return sdk.ToolResult{}, errors.New("pattern is empty")
	}
	expr := in.Pattern
	if in.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return sdk.ToolResult{}, fmt.Errorf("invalid pattern: %w", err)
	}
	var filter func(rel string) bool
	if in.Glob != "" {
		g, err := parseGlob(in.Glob)
		if err != nil {
			return sdk.ToolResult{}, err
		}
		if len(g) == 1 && g[0] != "**" {
			filter = func(rel string) bool { ok, _ := path.Match(g[0], path.Base(rel)); return ok }
		} else {
			filter = g.match
		}
	}
	base, baseRel, err := searchBase(c, in.Path)
	if err != nil {
		return sdk.ToolResult{}, err
	}
	fi, err := os.Stat(base)
	if err != nil {
		return sdk.ToolResult{}, fmt.Errorf("%s: %w", baseRel, err)
	}
	var out strings.Builder
	matches, skippedLarge := 0, 0
	full := false
	search := func(abs, rel string) {
		if full {
			return
		}
		if fi, err := os.Stat(abs); err != nil || fi.Size() > s.cfg.MaxFileBytes {
			skippedLarge++
			return
		}
		data, err := os.ReadFile(abs)
		if err != nil || bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
			return
		}
		line := 0
		for len(data) > 0 {
			line++
			i := bytes.IndexByte(data, '\n')
			var l []byte
			if i < 0 {
				l, data = data, nil
			} else {
				l, data = data[:i], data[i+1:]
			}
			if !re.Match(l) {
				continue
			}
			if matches == s.cfg.MaxGrepMatches {
				full = true
				return
			}
			matches++
			l = bytes.TrimRight(l, "\r")
			if len(l) > maxGrepLine {
				l = append(l[:maxGrepLine:maxGrepLine], "…"...)
			}
			fmt.Fprintf(&out, "%s:%d: %s\n", rel, line, l)
		}
	}
	var stopped bool
	if fi.Mode().IsRegular() {
		search(base, baseRel)
	} else {
		stopped, err = walkFiles(ctx, base, c.scope.hidden, func(abs, rel string, _ fs.DirEntry) error {
			if filter != nil && !filter(rel) {
				return nil
			}
			search(abs, scopeRel(baseRel, rel))
			if full {
				return fs.SkipAll
			}
			return nil
		})
		if err != nil {
			return sdk.ToolResult{}, err
		}
	}
	if matches == 0 {
		fmt.Fprintf(&out, "no matches for %q\n", in.Pattern)
	}
	if full {
		fmt.Fprintf(&out, "[stopped after %d matches; narrow the pattern, path or glob]\n", matches)
	}
	if skippedLarge > 0 {
		fmt.Fprintf(&out, "[skipped %d files over %s]\n", skippedLarge, sizeText(s.cfg.MaxFileBytes))
	}
	if stopped {
		fmt.Fprintf(&out, "[search stopped after %d entries; pick a narrower path]\n", DefaultMaxWalkEntries)
	}
	return sdk.ToolResult{Text: out.String()}, nil
}

// sizeText writes n bytes as MiB when it is a whole number of them.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
