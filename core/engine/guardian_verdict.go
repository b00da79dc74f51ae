package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/foya-dev/foya/core"
)

// maxVerdictBytes bounds a guardian answer that is parsed at all.
const maxVerdictBytes = 16 << 10

// ParseGuardianVerdict reads a guardian model's answer strictly: exactly one
// JSON object {"verdict": "approve"|"deny"|"escalate", "reason": "..."} with
// no other fields, optionally inside one ```json fence, and nothing else. A
// deny needs a reason. Anything else is an error, which the caller treats as
// escalate (fail closed).
func ParseGuardianVerdict(answer string) (verdict, reason string, err error) {
	if len(answer) > maxVerdictBytes {
		return "", "", fmt.Errorf("answer of %d bytes is longer than %d", len(answer), maxVerdictBytes)
	}
	if !utf8.ValidString(answer) {
		return "", "", errors.New("answer is not UTF-8")
	}
	body := strings.TrimSpace(answer)
	if rest, ok := strings.CutPrefix(body, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		inner, ok := strings.CutSuffix(strings.TrimSpace(rest), "```")
		if !ok || strings.Contains(inner, "```") {
			return "", "", errors.New("unterminated code fence")
		}
		body = strings.TrimSpace(inner)
	}
	if !strings.HasPrefix(body, "{") {
		return "", "", errors.New("answer is not a JSON object")
	}
	fields, err := stringObject(body)
	if err != nil {
		return "", "", err
	}
	var v struct{ Verdict, Reason *string }
	for k, val := range fields {
		switch k {
		case "verdict":
			v.Verdict = &val
		case "reason":
			v.Reason = &val
		default:
			return "", "", fmt.Errorf("unknown field %q", core.Clip(k, 32))
		}
	}
	if v.Verdict == nil {
		return "", "", errors.New(`no "verdict" field`)
	}
	switch *v.Verdict {
	case core.GuardianApprove, core.GuardianDeny, core.GuardianEscalate:
	default:
		return "", "", fmt.Errorf("verdict %q: expected approve, deny or escalate", core.Clip(*v.Verdict, 32))
	}
	if v.Reason != nil {
		reason = strings.TrimSpace(*v.Reason)
	}
	if *v.Verdict == core.GuardianDeny && reason == "" {
		return "", "", errors.New("a deny verdict needs a reason")
	}
	if bytes.ContainsRune([]byte(reason), 0) {
		return "", "", errors.New("reason holds a NUL byte")
	}
	return *v.Verdict, reason, nil
}

// stringObject decodes one JSON object whose values are all strings,
// refusing duplicate keys and anything after the object.
func stringObject(body string) (map[string]string, error) {
	dec := json.NewDecoder(strings.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("answer is not a JSON object")
	}
	out := map[string]string{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("answer is not a verdict object: %w", err)
		}
		key, _ := t.(string)
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("field %q appears twice", core.Clip(key, 32))
		}
		t, err = dec.Token()
		if err != nil {
			return nil, fmt.Errorf("answer is not a verdict object: %w", err)
		}
		val, ok := t.(string)
		if !ok {
			return nil, fmt.Errorf("field %q is not a string", core.Clip(key, 32))
		}
		out[key] = val
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, errors.New("answer is not a complete JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("text after the verdict object")
	}
	return out, nil
}
