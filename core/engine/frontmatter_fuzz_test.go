package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzFrontMatter parses arbitrary agent and skill files. parseFrontMatter
// must not panic; without a leading "---" line everything is body; fields
// are trimmed single-line pairs; the body is the tail of the file. A front
// matter rendered from one key and value then parses back to exactly that
// key, value and body. The same bytes as an agent file give either an error
// or an agent whose name, tools and max_turns are valid; reading the file
// with a cap of half its size gives the longest valid prefix.
func FuzzFrontMatter(f *testing.F) {
	f.Add("---\nname: reviewer\ndescription: Reviews a change for bugs.\ntools: read, grep, glob\nmax_turns: 10\nmodel: conn_1/gpt-4.1-mini\n---\nReview the diff.\n", "description", "Reviews code", "Body\n")
	f.Add("---\r\nname: x\r\n---\r\nbody\r\n", "name", "x", "")
	f.Add("no front matter\n---\nname: x\n", "k", "v", "---\n")
	f.Add("---\nname: open\n", "k", "", "b")
	f.Add("---\n---\n", "", "", "just a body")
	f.Add("---\nname: a:b: c\n  tools :  , read ,, \nmax_turns: -3\n---", "tools", " read ,bash ", "")
	f.Add("---\nmax_turns: 99999999999999999999\n---\n", "max_turns", "0", "x")
	f.Add("---\nname: ü\n---x\n", "name", "ü", "")
	f.Add("ééé", "description", "é", "é")
	dir := f.TempDir()

	f.Fuzz(func(t *testing.T, text, key, value, body string) {
		norm := strings.ReplaceAll(text, "\r\n", "\n")
		fields, rest, err := parseFrontMatter(text)
		if !strings.HasPrefix(norm, "---\n") {
			if err != nil || len(fields) != 0 || rest != norm {
				t.Fatalf("no front matter: got %v, %q, %v", fields, rest, err)
			}
		}
		if err == nil {
			if !strings.HasSuffix(norm, rest) {
				t.Fatalf("body %q is not the tail of %q", rest, norm)
			}
			for k, v := range fields {
				if k != strings.TrimSpace(k) || v != strings.TrimSpace(v) || strings.ContainsAny(k, "\n:") || strings.Contains(v, "\n") {
					t.Fatalf("field %q: %q is not a trimmed single-line pair", k, v)
				}
			}
		}

		// Round trip of one rendered field (or none, for an empty key).
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !strings.ContainsAny(key, ":\r\n") && !strings.ContainsAny(value, "\r\n") && !strings.HasPrefix(key, "-") {
			body = strings.ReplaceAll(body, "\r\n", "\n")
			src := "---\n"
			want := map[string]string{}
			if key != "" {
				src += key + ": " + value + "\n"
				want[key] = value
			}
			src += "---\n" + body
			got, gotBody, err := parseFrontMatter(src)
			if err != nil {
				t.Fatalf("parse %q: %v", src, err)
			}
			if len(got) != len(want) || got[key] != want[key] || gotBody != strings.ReplaceAll(body, "\r\n", "\n") {
				t.Fatalf("parse %q = %q, %q; want %q, %q", src, got, gotBody, want, body)
			}
		}

		path := filepath.Join(dir, "agent.md")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		// A cap cuts valid text at a character boundary, never refuses it.
		if text != "" && utf8.ValidString(text) {
			n := int64(len(text)+1) / 2
			got, err := readCapped(path, n)
			if err != nil {
				t.Fatalf("read %d of %d bytes of valid UTF-8: %v", n, len(text), err)
			}
			if !strings.HasPrefix(text, string(got)) || int64(len(got)) > n || int64(len(got)) <= n-utf8.UTFMax {
				t.Fatalf("read %d bytes capped at %d: %q of %q", len(got), n, got, text)
			}
		}

		a, err := parseAgentFile(path)
		if err != nil {
			return
		}
		if !agentNameRe.MatchString(a.Name) {
			t.Fatalf("agent name %q accepted", a.Name)
		}
		if a.MaxTurns < 0 {
			t.Fatalf("max_turns %d accepted", a.MaxTurns)
		}
		for _, tool := range a.Tools {
			if tool == "" || tool != strings.TrimSpace(tool) || strings.Contains(tool, ",") {
				t.Fatalf("tool %q accepted", tool)
			}
		}
		for _, s := range []string{a.Description, a.Instructions, a.Model} {
			if !utf8.ValidString(s) {
				t.Fatalf("agent field is not valid UTF-8: %q", s)
			}
		}
	})
}
