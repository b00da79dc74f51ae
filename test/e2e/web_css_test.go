package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestWebClientTypeScale: Foya web has one type scale and one spacing scale.
// Every font size in the client's CSS is one of --fs-1 … --fs-6 (the font
// shorthand too), every margin, padding and gap is 0, auto or a step of
// --sp-1 … --sp-7 (negated with calc where it pulls back), and neither the
// page nor the scripts set a size of its own in a style attribute.
func TestWebClientTypeScale(t *testing.T) {
	t.Parallel()
	css, err := os.ReadFile(repoPath("edge", "web", "client", "app.css"))
	if err != nil {
		t.Fatal(err)
	}
	src := regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(string(css), "")
	decl := regexp.MustCompile(`(?:^|[;{])\s*([a-z-]+)\s*:\s*([^;{}]+)`)
	fsVar := regexp.MustCompile(`^var\(--fs-[1-6]\)$`)
	spStep := regexp.MustCompile(`^(?:0|auto|var\(--sp-[1-7]\)|calc\(var\(--sp-[1-7]\) \* -1\))$`)
	rawSize := regexp.MustCompile(`\d(?:px|rem|em|pt|%)|\b(?:small|medium|large|smaller|larger|x-small|x-large)\b`)
	fonts, spaces := 0, 0
	for _, m := range decl.FindAllStringSubmatch(src, -1) {
		prop, val := m[1], strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[2]), "!important"))
		switch {
		case prop == "font-size":
			fonts++
			if !fsVar.MatchString(val) && val != "inherit" {
				t.Errorf("font-size:%s is not on the type scale (var(--fs-1) … var(--fs-6))", val)
			}
		case prop == "font":
			fonts++
			if val != "inherit" && (!strings.Contains(val, "var(--fs-") || rawSize.MatchString(strings.SplitN(val, "/", 2)[0])) {
				t.Errorf("font:%s does not take its size from the type scale", val)
			}
		case regexp.MustCompile(`^(?:margin|padding)(?:-(?:top|right|bottom|left|block|inline))?$|^(?:row-|column-)?gap$`).MatchString(prop):
			spaces++
			for _, part := range splitCSSValue(val) {
				if !spStep.MatchString(part) {
					t.Errorf("%s:%s: %q is not on the spacing scale (0, auto, var(--sp-1) … var(--sp-7))", prop, val, part)
				}
			}
		}
	}
	if fonts < 10 || spaces < 20 {
		t.Fatalf("read %d font and %d spacing declarations: is the CSS parsed?", fonts, spaces)
	}
	scripts, err := filepath.Glob(repoPath("edge", "web", "client", "*.js"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("client scripts %v: %v", scripts, err)
	}
	for _, f := range append([]string{repoPath("edge", "web", "client", "index.html")}, scripts...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if loc := regexp.MustCompile(`(?i)font-size|\.style\.font|style="[^"]*font`).FindIndex(b); loc != nil {
			t.Errorf("%s sets a font size outside the stylesheet: %q", f, b[loc[0]:min(len(b), loc[1]+40)])
		}
	}
}

// splitCSSValue splits a value on the spaces outside parentheses.
func splitCSSValue(v string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range v {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ' ' && depth == 0:
			if i > start {
				out = append(out, v[start:i])
			}
			start = i + 1
		}
	}
	if start < len(v) {
		out = append(out, v[start:])
	}
	return out
}
