package tools

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
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
			//lint:ignore ST1005 the message ends with the ".." it refuses
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

// baseRelOf is rel (relative to the scope) relative to the search base.
func baseRelOf(baseRel, rel string) string {
	if baseRel == "." {
		return rel
	}
	return strings.TrimPrefix(rel, baseRel+"/")
}

// searchBase resolves the optional directory argument.
func searchBase(c *call, p string) (abs, rel string, err error) {
	p = cmp.Or(p, ".")
	return c.scope.resolve(p)
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
	_, baseRel, err := searchBase(c, in.Path)
	if err != nil {
		return sdk.ToolResult{}, err
	}
	if d, err := c.scope.openRead(baseRel); err != nil {
		return sdk.ToolResult{}, fmt.Errorf("%s is not a directory", baseRel)
	} else {
		fi, err := d.Stat()
		d.Close()
		if err != nil || !fi.IsDir() {
			return sdk.ToolResult{}, fmt.Errorf("%s is not a directory", baseRel)
		}
	}
	type hit struct {
		rel   string
		mtime time.Time
	}
	var hits []hit
	stopped, err := c.scope.walk(ctx, baseRel, DefaultMaxWalkEntries, func(e walkEntry) error {
		if !g.match(baseRelOf(baseRel, e.rel)) {
			return nil
		}
		hits = append(hits, hit{e.rel, e.info.ModTime()})
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
	re, filter, err := compileGrep(in)
	if err != nil {
		return sdk.ToolResult{}, err
	}
	_, baseRel, err := searchBase(c, in.Path)
	if err != nil {
		return sdk.ToolResult{}, err
	}
	bf, err := c.scope.openRead(baseRel)
	if err != nil {
		return sdk.ToolResult{}, fmt.Errorf("%s: %w", baseRel, err)
	}
	fi, err := bf.Stat()
	bf.Close()
	if err != nil {
		return sdk.ToolResult{}, fmt.Errorf("%s: %w", baseRel, err)
	}
	g := &grepSearch{scope: c.scope, re: re, maxFileBytes: s.cfg.MaxFileBytes, maxMatches: s.cfg.MaxGrepMatches}
	var stopped bool
	if fi.Mode().IsRegular() {
		g.file(baseRel)
	} else {
		stopped, err = c.scope.walk(ctx, baseRel, DefaultMaxWalkEntries, func(e walkEntry) error {
			if filter != nil && !filter(baseRelOf(baseRel, e.rel)) {
				return nil
			}
			g.file(e.rel)
			if g.full {
				return fs.SkipAll
			}
			return nil
		})
		if err != nil {
			return sdk.ToolResult{}, err
		}
	}
	return sdk.ToolResult{Text: g.result(in.Pattern, stopped)}, nil
}

// compileGrep compiles grep's pattern and its optional file-name glob
// (nil filter: every file).
func compileGrep(in grepInput) (*regexp.Regexp, func(rel string) bool, error) {
	if in.Pattern == "" {
		return nil, nil, errors.New("pattern is empty")
	}
	expr := in.Pattern
	if in.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid pattern: %w", err)
	}
	if in.Glob == "" {
		return re, nil, nil
	}
	g, err := parseGlob(in.Glob)
	if err != nil {
		return nil, nil, err
	}
	if len(g) == 1 && g[0] != "**" {
		return re, func(rel string) bool { ok, _ := path.Match(g[0], path.Base(rel)); return ok }, nil
	}
	return re, g.match, nil
}

// grepSearch collects one grep call's matching lines across files.
type grepSearch struct {
	scope        *scope
	re           *regexp.Regexp
	maxFileBytes int64
	maxMatches   int

	out          strings.Builder
	matches      int
	skippedLarge int
	full         bool // maxMatches reached; no more files are searched
}

// file searches one file, skipping non-regular, binary and too large
// files.
func (g *grepSearch) file(rel string) {
	if g.full {
		return
	}
	f, err := g.scope.openRead(rel)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > g.maxFileBytes {
		if err == nil && fi.Mode().IsRegular() {
			g.skippedLarge++
		}
		return
	}
	data, err := io.ReadAll(io.LimitReader(f, g.maxFileBytes))
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
		if !g.re.Match(l) {
			continue
		}
		if g.matches == g.maxMatches {
			g.full = true
			return
		}
		g.matches++
		l = bytes.TrimRight(l, "\r")
		if len(l) > maxGrepLine {
			l = append(l[:maxGrepLine:maxGrepLine], "…"...)
		}
		fmt.Fprintf(&g.out, "%s:%d: %s\n", rel, line, l)
	}
}

// result is the tool's text: the matches and notes on what stopped or
// skipped the search.
func (g *grepSearch) result(pattern string, stopped bool) string {
	if g.matches == 0 {
		fmt.Fprintf(&g.out, "no matches for %q\n", pattern)
	}
	if g.full {
		fmt.Fprintf(&g.out, "[stopped after %d matches; narrow the pattern, path or glob]\n", g.matches)
	}
	if g.skippedLarge > 0 {
		fmt.Fprintf(&g.out, "[skipped %d files over %s]\n", g.skippedLarge, sizeText(g.maxFileBytes))
	}
	if stopped {
		fmt.Fprintf(&g.out, "[search stopped after %d entries; pick a narrower path]\n", DefaultMaxWalkEntries)
	}
	return g.out.String()
}

// sizeText writes n bytes as MiB when it is a whole number of them.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
