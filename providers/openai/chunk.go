package openai

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// decodeChunk decodes one streamed chunk. Nearly every chunk of a reply has
// the same small shape (an id, a model, one choice with a text or reasoning
// delta and a finish reason); decoding it with encoding/json's reflection
// cost more CPU per chunk than the rest of the plugin's path together. The
// fast path handles exactly that shape and gives the value encoding/json
// would; anything else (tool calls, usage, an error object, escaped keys,
// a key in another case, a repeated key, a number that is not a plain
// integer, invalid JSON) goes to encoding/json, which also produces the
// error for malformed input. FuzzDecodeChunk checks the two agree.
func decodeChunk(data []byte, c *chatChunk) error {
	if fastChunk(data, c) {
		return nil
	}
	*c = chatChunk{}
	return json.Unmarshal(data, c)
}

// fastChunk decodes data into c when it is a valid chunk of the common
// shape, and reports whether it did.
func fastChunk(data []byte, c *chatChunk) bool {
	if !json.Valid(data) {
		return false
	}
	s := scanner{b: data}
	var seen [4]bool // choices, model, usage/error, object
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			return once(&seen[0]) && s.choices(c)
		case "model":
			return once(&seen[1]) && s.optString(&c.Model)
		case "object":
			return once(&seen[3]) && s.optString(&c.Object)
		case "usage", "error":
			// Only null is handled here (usage comes once per stream).
			return s.null()
		case "message", "type", "code":
			return false // a flat error object (chatChunk.flatError)
		}
		if foldsTo(key, "choices", "model", "usage", "error", "message", "object", "type", "code") {
			return false
		}
		return s.skip()
	})
	s.ws()
	return ok && s.i == len(s.b)
}

func (s *scanner) choices(c *chatChunk) bool {
	if s.null() {
		c.Choices = nil
		return true
	}
	if !s.lit('[') {
		return false
	}
	c.Choices = []chunkChoice{}
	s.ws()
	if s.lit(']') {
		return true
	}
	for {
		var ch chunkChoice
		var seen [3]bool
		ok := s.object(func(key []byte) bool {
			switch string(key) {
			case "index":
				return once(&seen[0]) && (s.null() || s.integer(&ch.Index))
			case "delta":
				return once(&seen[1]) && (s.null() || s.delta(&ch.Delta))
			case "finish_reason":
				return once(&seen[2]) && s.optStringPtr(&ch.FinishReason)
			}
			if foldsTo(key, "index", "delta", "finish_reason", "message") {
				return false
			}
			return s.skip()
		})
		if !ok {
			return false
		}
		c.Choices = append(c.Choices, ch)
		s.ws()
		if s.lit(']') {
			return true
		}
		if !s.lit(',') {
			return false
		}
	}
}

func (s *scanner) delta(d *chatDelta) bool {
	var seen [4]bool
	return s.object(func(key []byte) bool {
		var dst **string
		var i int
		switch string(key) {
		case "content":
			dst, i = &d.Content, 0
		case "reasoning_content":
			dst, i = &d.ReasoningContent, 1
		case "reasoning":
			dst, i = &d.Reasoning, 2
		case "refusal":
			dst, i = &d.Refusal, 3
		default:
			if foldsTo(key, "content", "reasoning_content", "reasoning", "refusal", "tool_calls") {
				return false
			}
			return s.skip()
		}
		// A value that is not a string or null (an array of parts) goes
		// to encoding/json and chatDelta.UnmarshalJSON.
		return once(&seen[i]) && s.optStringPtr(dst)
	})
}

// once marks a key seen and reports whether it was new (encoding/json
// keeps the last of repeated keys: those go to it).
func once(seen *bool) bool {
	if *seen {
		return false
	}
	*seen = true
	return true
}

// foldsTo reports whether key matches one of names the way encoding/json
// matches keys (case-insensitively) without being one of them exactly.
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// scanner walks JSON that json.Valid accepted.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// lit consumes the byte c (after white space).
func (s *scanner) lit(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) null() bool {
	s.ws()
	if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// object calls field for each key of an object, with the scanner at its
// value; field consumes the value or reports false.
func (s *scanner) object(field func(key []byte) bool) bool {
	if !s.lit('{') {
		return false
	}
	s.ws()
	if s.lit('}') {
		return true
	}
	for {
		key, ok := s.str()
		if !ok || !s.lit(':') || !field(key) {
			return false
		}
		s.ws()
		if s.lit('}') {
			return true
		}
		if !s.lit(',') {
			return false
		}
	}
}

// str reads a key: a string without escapes whose bytes are valid UTF-8
// (other keys are left to encoding/json).
func (s *scanner) str() ([]byte, bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			v := s.b[start:j]
			if !utf8.Valid(v) {
				return nil, false
			}
			s.i = j + 1
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// value reads a string value; one with escapes or invalid UTF-8 is
// decoded by encoding/json (which unescapes and replaces invalid bytes).
func (s *scanner) value() (string, bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	start, plain := s.i+1, true
	for j := start; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			plain = false
			j++
		case '"':
			tok := s.b[s.i : j+1]
			s.i = j + 1
			if plain && utf8.Valid(tok) {
				return string(tok[1 : len(tok)-1]), true
			}
			var v string
			if json.Unmarshal(tok, &v) != nil {
				return "", false
			}
			return v, true
		}
	}
	return "", false
}

func (s *scanner) optString(dst *string) bool {
	if s.null() {
		return true // encoding/json leaves the field as it was
	}
	v, ok := s.value()
	if ok {
		*dst = v
	}
	return ok
}

func (s *scanner) optStringPtr(dst **string) bool {
	if s.null() {
		*dst = nil
		return true
	}
	v, ok := s.value()
	if ok {
		*dst = &v
	}
	return ok
}

// integer reads a plain decimal integer that fits an int.
func (s *scanner) integer(dst *int) bool {
	s.ws()
	neg := s.i < len(s.b) && s.b[s.i] == '-'
	j := s.i
	if neg {
		j++
	}
	start := j
	n := 0
	for ; j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9'; j++ {
		if j-start >= 9 {
			return false // leave big numbers to encoding/json
		}
		n = n*10 + int(s.b[j]-'0')
	}
	if j == start || (j < len(s.b) && (s.b[j] == '.' || s.b[j] == 'e' || s.b[j] == 'E')) {
		return false
	}
	if neg {
		n = -n
	}
	*dst, s.i = n, j
	return true
}

// skip consumes any value (valid JSON, checked by json.Valid).
func (s *scanner) skip() bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	depth := 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			s.i++
			for s.i < len(s.b) && s.b[s.i] != '"' {
				if s.b[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			s.i++
		case '{', '[':
			depth++
			s.i++
		case '}', ']':
			if depth == 0 {
				return true // the end of the enclosing value
			}
			depth--
			s.i++
		case ',':
			if depth == 0 {
				return true
			}
			s.i++
		default:
			s.i++
		}
		if depth == 0 && s.i <= len(s.b) {
			// A scalar ends at the next ',', '}' or ']' (or white space
			// before them); a closed string or container ends here.
			if c := s.b[s.i-1]; c == '"' || c == '}' || c == ']' {
				return true
			}
		}
	}
	return s.i <= len(s.b)
}
