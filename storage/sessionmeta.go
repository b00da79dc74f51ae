package storage

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/foya-dev/foya/core"
)

// A session's metadata is a JSON object (core.SessionMeta as json.Marshal
// writes it) that every read of a session decodes; listing 10,000
// sessions spent half its CPU in encoding/json's reflection. decodeMeta
// reads the object as json.Unmarshal would into a zero SessionMeta, with a
// direct scan of the flat fields (strings without escapes, which become
// substrings of s without a copy, the pinned flag, the creation time); the
// nested ones (tasks, agent, fallback models, worktree) go to
// json.Unmarshal each. Anything else — an escape in a string, a null, a
// key spelt differently, a time json.Unmarshal would parse otherwise,
// invalid JSON — falls back to json.Unmarshal of the whole object, so the
// result and the errors are always json.Unmarshal's (FuzzDecodeMeta).
func decodeMeta(s string, m *core.SessionMeta) error {
	if fastMeta(s, m) {
		return nil
	}
	*m = core.SessionMeta{}
	return json.Unmarshal([]byte(s), m)
}

// fastMeta decodes b into m (zeroed first) and reports whether it could;
// false leaves m in any state.
func fastMeta(b string, m *core.SessionMeta) bool {
	*m = core.SessionMeta{}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		key, j, ok := plainString(b, i)
		if !ok {
			return false
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return false
		}
		var dst *string
		switch key {
		case "id":
			dst = &m.ID
		case "parentId":
			dst = &m.ParentID
		case "source":
			dst = &m.Source
		case "projectId":
			dst = &m.ProjectID
		case "title":
			dst = &m.Title
		case "connectionId":
			dst = &m.ConnectionID
		case "model":
			dst = &m.Model
		case "reasoningEffort":
			dst = &m.ReasoningEffort
		case "approvalMode":
			dst = (*string)(&m.ApprovalMode)
		case "agentMode":
			dst = (*string)(&m.AgentMode)
		case "pinned":
			switch {
			case strings.HasPrefix(b[i:], "true"):
				m.Pinned, i = true, i+4
			case strings.HasPrefix(b[i:], "false"):
				m.Pinned, i = false, i+5
			default:
				return false
			}
		case "createdAt":
			v, j, ok := plainString(b, i)
			if !ok || !strictRFC3339(v) {
				return false
			}
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return false
			}
			m.CreatedAt, i = t, j
		case "tasks", "agent", "fallbackModels", "worktree":
			j, ok := skipValue(b, i)
			if !ok {
				return false
			}
			v := []byte(b[i:j])
			var err error
			switch key[0] {
			case 't':
				err = json.Unmarshal(v, &m.Tasks)
			case 'a':
				err = json.Unmarshal(v, &m.Agent)
			case 'f':
				err = json.Unmarshal(v, &m.FallbackModels)
			default:
				err = json.Unmarshal(v, &m.Worktree)
			}
			if err != nil {
				return false
			}
			i = j
		default:
			return false
		}
		if dst != nil {
			v, j, ok := plainString(b, i)
			if !ok {
				return false
			}
			*dst, i = v, j
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// strictRFC3339 reports whether time.Parse(time.RFC3339, v) reads v as
// time.Time.UnmarshalJSON does: it is stricter on the few points checked
// here (go.dev/issue/54580), and the same otherwise.
func strictRFC3339(v string) bool {
	const date = len("2006-01-02T")
	if len(v) < len("2006-01-02T15:04:05Z") || v[date+2] != ':' || v[date+8] == ',' {
		return false
	}
	if v[len(v)-1] == 'Z' {
		return true
	}
	tz := v[len(v)-len("07:00"):]
	num2 := func(s string) int { return 10*int(s[0]-'0') + int(s[1]-'0') }
	return num2(tz) < 24 && num2(tz[3:]) < 60
}

func skipSpace(b string, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads the JSON string that starts at b[i] when its value is
// its bytes as they are: no escape, no control character, valid UTF-8. It
// returns the contents and the index after the closing quote.
func plainString(b string, i int) (s string, end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	ascii := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s = b[i+1 : j]
			if !ascii && !utf8.ValidString(s) {
				return "", 0, false
			}
			return s, j + 1, true
		case c == '\\' || c < 0x20:
			return "", 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", 0, false
}

// skipValue returns the index after the JSON value that starts at b[i]
// (an object, array, string or literal), without checking it beyond its
// extent: json.Unmarshal checks what is inside.
func skipValue(b string, i int) (int, bool) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return 0, false
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i, true
			}
			depth--
		case ',', ' ', '\n', '\t', '\r':
			if depth == 0 {
				return i, true
			}
		}
		i++
		if depth == 0 && (b[i-1] == '"' || b[i-1] == '}' || b[i-1] == ']') {
			return i, true
		}
	}
	return i, depth == 0
}
