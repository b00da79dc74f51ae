package engine_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
)

func TestParseGuardianVerdict(t *testing.T) {
	for _, tc := range []struct {
		name, in, verdict, reason, err string
	}{
		{"approve", `{"verdict":"approve","reason":"fine"}`, "approve", "fine", ""},
		{"approve without reason", `{"verdict":"approve"}`, "approve", "", ""},
		{"deny", ` {"reason":"  deletes the root  ","verdict":"deny"} `, "deny", "deletes the root", ""},
		{"escalate", `{"verdict":"escalate","reason":"unclear"}`, "escalate", "unclear", ""},
		{"fenced", "```json\n{\"verdict\":\"approve\",\"reason\":\"ok\"}\n```", "approve", "ok", ""},
		{"bare fence", "```\n{\"verdict\":\"deny\",\"reason\":\"no\"}\n```", "deny", "no", ""},
		{"deny without reason", `{"verdict":"deny"}`, "", "", "needs a reason"},
		{"deny with blank reason", `{"verdict":"deny","reason":"  "}`, "", "", "needs a reason"},
		{"unknown verdict", `{"verdict":"APPROVE","reason":"x"}`, "", "", `verdict "APPROVE"`},
		{"no verdict", `{"reason":"x"}`, "", "", `no "verdict"`},
		{"unknown field", `{"verdict":"approve","reason":"x","confidence":"high"}`, "", "", "unknown field"},
		{"duplicate verdict", `{"verdict":"deny","reason":"x","verdict":"approve"}`, "", "", "twice"},
		{"non-string value", `{"verdict":true}`, "", "", "not a string"},
		{"nested", `{"verdict":{"v":"approve"}}`, "", "", "not a string"},
		{"prose", `Sure! {"verdict":"approve"}`, "", "", "not a JSON object"},
		{"trailing text", `{"verdict":"approve"} and more`, "", "", "after the verdict"},
		{"two objects", `{"verdict":"approve"}{"verdict":"deny"}`, "", "", "after the verdict"},
		{"array", `[{"verdict":"approve"}]`, "", "", "not a JSON object"},
		{"truncated", `{"verdict":"approve","reason":"x`, "", "", "verdict object"},
		{"unterminated fence", "```json\n{\"verdict\":\"approve\"}", "", "", "fence"},
		{"empty", ``, "", "", "not a JSON object"},
		{"nul in reason", `{"verdict":"approve","reason":"a\u0000b"}`, "", "", "NUL"},
		{"too long", `{"verdict":"approve","reason":"` + strings.Repeat("x", 20000) + `"}`, "", "", "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, r, err := engine.ParseGuardianVerdict(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q %q %v, want an error with %q", v, r, err, tc.err)
				}
				return
			}
			if err != nil || v != tc.verdict || r != tc.reason {
				t.Fatalf("got %q %q %v, want %q %q", v, r, err, tc.verdict, tc.reason)
			}
		})
	}
}

// FuzzParseGuardianVerdict: the parser never panics, and whatever it
// accepts is one of the three verdicts, a deny always has a reason, and the
// reason is valid UTF-8 without NUL taken from the answer.
func FuzzParseGuardianVerdict(f *testing.F) {
	for _, s := range []string{
		`{"verdict":"approve","reason":"fine"}`, `{"verdict":"deny","reason":"no"}`, `{"verdict":"escalate"}`,
		"```json\n{\"verdict\":\"approve\"}\n```", `{"verdict":"deny"}`, `{"verdict":"approve"} x`, `garbage`, `{`, `{"a":1}`,
		`{"verdict":"approve","verdict":"deny"}`, "\xff{", `{"verdict":"approve","reason":"\ud800"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, r, err := engine.ParseGuardianVerdict(in)
		if err != nil {
			if v != "" || r != "" {
				t.Fatalf("error %v with a verdict %q %q", err, v, r)
			}
			return
		}
		switch v {
		case core.GuardianApprove, core.GuardianEscalate:
		case core.GuardianDeny:
			if strings.TrimSpace(r) == "" {
				t.Fatalf("deny without a reason from %q", in)
			}
		default:
			t.Fatalf("verdict %q from %q", v, in)
		}
		if !utf8.ValidString(r) || strings.ContainsRune(r, 0) || len(r) > len(in) {
			t.Fatalf("reason %q from %q", r, in)
		}
	})
}
