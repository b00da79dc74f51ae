package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/foya-dev/foya/edge/web"
)

// docFiles are the user documentation pages whose examples are checked,
// relative to the module root.
func docFiles(t *testing.T) []string {
	files := []string{"README.md"}
	more, err := filepath.Glob(repoPath("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range more {
		files = append(files, filepath.Join("docs", filepath.Base(f)))
	}
	return files
}

var fenceRe = regexp.MustCompile("(?ms)^```(\\w*)\\n(.*?)^```")

type codeBlock struct{ file, lang, body string }

func codeBlocks(t *testing.T) []codeBlock {
	var out []codeBlock
	for _, f := range docFiles(t) {
		raw, err := os.ReadFile(repoPath(f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fenceRe.FindAllStringSubmatch(string(raw), -1) {
			out = append(out, codeBlock{file: f, lang: m[1], body: m[2]})
		}
	}
	return out
}

// Every GraphQL operation in the docs (graphql blocks, and the "query" of
// curl examples) and the playground's default text validates against the
// schema the kernel serves.
func TestDocsGraphQLExamplesValidate(t *testing.T) {
	t.Parallel()
	// The kernel embeds the module root's schema.graphqls and serves it.
	schemaSDL, err := os.ReadFile(repoPath("schema.graphqls"))
	if err != nil {
		t.Fatal(err)
	}
	schema, err := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(schemaSDL)})
	if err != nil {
		t.Fatal(err)
	}
	type example struct{ where, query string }
	examples := []example{{"playground default query", web.PlaygroundQuery}}
	queryRe := regexp.MustCompile(`"query":("(?:[^"\\]|\\.)*")`)
	for _, b := range codeBlocks(t) {
		switch b.lang {
		case "graphql":
			examples = append(examples, example{b.file + " graphql block", b.body})
		case "sh":
			for _, m := range queryRe.FindAllStringSubmatch(b.body, -1) {
				var q string
				// The JSON sits in single quotes in the shell: \" stays \".
				if err := json.Unmarshal([]byte(m[1]), &q); err != nil {
					t.Fatalf("%s: curl example %s: %v", b.file, m[1], err)
				}
				examples = append(examples, example{b.file + " curl example", q})
			}
		}
	}
	if len(examples) < 6 {
		t.Fatalf("found only %d examples: is the extraction broken?", len(examples))
	}
	for _, ex := range examples {
		if _, errs := gqlparser.LoadQueryWithRules(schema, ex.query, nil); len(errs) > 0 {
			t.Errorf("%s does not validate: %v\n%s", ex.where, errs, ex.query)
		}
	}
}

// Every `foya …` command line in the docs names a real command, and each of
// its --flags is one that command's --help lists.
func TestDocsCommandExamples(t *testing.T) {
	t.Parallel()
	commands := 0
	for _, b := range codeBlocks(t) {
		if b.lang != "sh" {
			continue
		}
		for _, line := range strings.Split(b.body, "\n") {
			// The command may follow a pipe: "git diff | foya exec -".
			if i := strings.Index(line, "foya "); i >= 0 && (i == 0 || strings.HasSuffix(strings.TrimSpace(line[:i]), "|")) {
				line = line[i:]
			} else {
				continue
			}
			if j := strings.Index(line, " #"); j >= 0 {
				line = line[:j]
			}
			if j := strings.Index(line, " | "); j >= 0 {
				line = line[:j]
			}
			fields := strings.Fields(line)
			if j := slices.Index(fields, "--"); j >= 0 {
				fields = fields[:j] // what follows is another program's command line
			}
			cmd := fields[1:2]
			if len(fields) > 2 && (fields[1] == "connections" || fields[1] == "sessions" || fields[1] == "mcp" || fields[1] == "terminals") {
				cmd = fields[1:3]
			}
			help := helpText(t, cmd)
			for _, f := range fields {
				if !strings.HasPrefix(f, "--") {
					continue
				}
				name, _, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
				if !strings.Contains(help, "  -"+name+" ") && !strings.Contains(help, "  -"+name+"\n") {
					t.Errorf("%s: %q: %v has no flag --%s:\n%s", b.file, line, cmd, name, help)
				}
			}
			commands++
		}
	}
	if commands < 10 {
		t.Fatalf("found only %d command examples", commands)
	}
}

var helpCache = map[string]string{}

func helpText(t *testing.T, cmd []string) string {
	key := strings.Join(cmd, " ")
	if h, ok := helpCache[key]; ok {
		return h
	}
	out, _ := exec.Command(foyaBin, append(append([]string{}, cmd...), "--help")...).CombinedOutput()
	h := string(out)
	if !strings.Contains(h, "Usage") && !strings.Contains(h, "  -") {
		t.Fatalf("foya %s --help printed no usage (unknown command?):\n%s", key, h)
	}
	helpCache[key] = h
	return h
}

// Every relative link in the README and docs/ names a file of the
// repository, and a link with a fragment names a heading of that page
// (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens),
// so moving a section cannot leave a link behind.
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	linkRe := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCodeRe := regexp.MustCompile("`[^`\n]*`")
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		raw, err := os.ReadFile(repoPath(file))
		if err != nil {
			t.Fatal(err)
		}
		a := map[string]bool{}
		// Headings outside code blocks only.
		text := fenceRe.ReplaceAllString(string(raw), "")
		for _, line := range strings.Split(text, "\n") {
			if !strings.HasPrefix(line, "#") {
				continue
			}
			title := strings.TrimSpace(strings.TrimLeft(line, "#"))
			var b strings.Builder
			for _, r := range strings.ToLower(title) {
				switch {
				case r == ' ':
					b.WriteRune('-')
				case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
					b.WriteRune(r)
				}
			}
			id := b.String()
			for n := 1; a[id]; n++ { // a repeated heading gets -1, -2, …
				id = fmt.Sprintf("%s-%d", b.String(), n)
			}
			a[id] = true
		}
		anchors[file] = a
		return a
	}
	links := 0
	for _, file := range docFiles(t) {
		raw, err := os.ReadFile(repoPath(file))
		if err != nil {
			t.Fatal(err)
		}
		// Links outside code blocks and code spans only.
		text := inlineCodeRe.ReplaceAllString(fenceRe.ReplaceAllString(string(raw), ""), "")
		for _, m := range linkRe.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(repoPath(dest)); err != nil {
					t.Errorf("%s: link %q: no such file %s", file, target, dest)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[frag] {
				t.Errorf("%s: link %q: %s has no heading #%s", file, target, dest, frag)
			}
			links++
		}
	}
	if links < 50 {
		t.Fatalf("found only %d relative links", links)
	}
}
