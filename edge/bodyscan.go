package edge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/foya-dev/foya/graph"
)

// The bounded request decoder. A JSON request body (POST, SSE) is read as a
// stream and checked before gqlgen decodes any of it: variables and
// extensions may use at most the variables budget (MaxVariablesBytes), the
// whole body the body limit, nesting at most maxJSONDepth levels. What
// passes is rebuilt as a compact object holding only the four members
// gqlgen reads (query, operationName, variables, extensions); unknown
// members are skipped without being kept. A body over a bound is refused as
// soon as the bound is crossed, having held at most the bound: eight
// parallel 8 MiB bodies of variables cost about 8 MiB, not gigabytes of
// decoded lists.

// maxJSONDepth is the deepest nesting of arrays and objects in variables or
// extensions (no input type of the schema nests more than a few levels).
const maxJSONDepth = 64

// errVariablesTooLarge reports variables (with extensions) over their budget.
type errVariablesTooLarge struct{ limit int64 }

func (e errVariablesTooLarge) Error() string {
	return "the request's variables are larger than " + graph.ByteSize(e.limit) + ", the limit of variables in a JSON request " +
		"(send files with a multipart request: uploadAttachment, importSessionFile)"
}

// errBadJSON reports a body that is not one JSON object of the expected shape.
type errBadJSON struct{ msg string }

func (e errBadJSON) Error() string { return "the request body is not a GraphQL JSON request: " + e.msg }

// requestMembers are the members of a GraphQL JSON request gqlgen reads,
// and whether they are charged to the variables budget. encoding/json
// matches member names without regard to case; so does the scanner.
var requestMembers = []struct {
	name    string
	charged bool
}{
	{"query", false},
	{"operationName", false},
	{"variables", true},
	{"extensions", true},
}

// scanReaders are scanRequest's buffered readers, reused: a new one was a
// 32 KiB allocation every request.
var scanReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}

// scanRequest reads one GraphQL JSON request from r (already limited to the
// body limit by the caller) and returns it rebuilt, or an error:
// errVariablesTooLarge, errBadJSON, or the reader's own error (a
// *http.MaxBytesError, a timeout).
func scanRequest(r io.Reader, varBudget int64) ([]byte, error) {
	br := scanReaders.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() {
		br.Reset(nil) // keeps no reference to the request's body
		scanReaders.Put(br)
	}()
	s := &jsonScanner{r: br}
	if err := s.skipSpace(); err != nil {
		return nil, s.eofIsBad(err, "the body is empty")
	}
	if c, _ := s.r.ReadByte(); c != '{' {
		return nil, errBadJSON{"expected a JSON object"}
	}
	var out bytes.Buffer
	out.WriteByte('{')
	seen := make([]bool, len(requestMembers))
	left := varBudget
	for first := true; ; first = false {
		name, end, err := s.nextMember(first)
		if err != nil {
			return nil, err
		}
		if end {
			break
		}
		idx := memberIndex(name)
		if idx < 0 { // not read by gqlgen: skipped, not kept
			if err := s.value(nil, -1); err != nil {
				return nil, err
			}
			continue
		}
		if seen[idx] {
			return nil, errBadJSON{fmt.Sprintf("the member %q appears twice", requestMembers[idx].name)}
		}
		seen[idx] = true
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		out.WriteString(`"` + requestMembers[idx].name + `":`)
		if !requestMembers[idx].charged {
			if err := s.value(&out, -1); err != nil {
				return nil, err
			}
			continue
		}
		start := out.Len()
		if err := s.value(&out, left); err != nil {
			if errors.Is(err, errOverBudget) {
				return nil, errVariablesTooLarge{varBudget}
			}
			return nil, err
		}
		left -= int64(out.Len() - start)
	}
	if err := s.skipSpace(); err == nil {
		return nil, errBadJSON{"more data after the JSON object"}
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// nextMember reads the request object up to the value of its next member
// and returns the member's name, or end when the object closes instead.
func (s *jsonScanner) nextMember(first bool) (name string, end bool, err error) {
	if err := s.skipSpace(); err != nil {
		return "", false, s.eofIsBad(err, "the body ends inside the object")
	}
	c, _ := s.r.ReadByte()
	if c == '}' {
		return "", true, nil
	}
	if !first {
		if c != ',' {
			return "", false, errBadJSON{fmt.Sprintf("expected , or } after a member, got %q", c)}
		}
		if err := s.skipSpace(); err != nil {
			return "", false, s.eofIsBad(err, "the body ends inside the object")
		}
		c, _ = s.r.ReadByte()
	}
	if c != '"' {
		return "", false, errBadJSON{"expected a member name"}
	}
	name, err = s.readName()
	if err != nil {
		return "", false, err
	}
	if err := s.skipSpace(); err != nil {
		return "", false, s.eofIsBad(err, "the body ends after a member name")
	}
	if c, _ := s.r.ReadByte(); c != ':' {
		return "", false, errBadJSON{"expected : after a member name"}
	}
	if err := s.skipSpace(); err != nil {
		return "", false, s.eofIsBad(err, "the body ends before a value")
	}
	return name, false, nil
}

// memberIndex is the index of name in requestMembers, or -1.
func memberIndex(name string) int {
	for i, m := range requestMembers {
		if strings.EqualFold(name, m.name) {
			return i
		}
	}
	return -1
}

var errOverBudget = errors.New("over budget")

type jsonScanner struct {
	r *bufio.Reader
}

// eofIsBad turns the end of the body into errBadJSON; other read errors
// pass as they are.
func (s *jsonScanner) eofIsBad(err error, msg string) error {
	if errors.Is(err, io.EOF) {
		return errBadJSON{msg}
	}
	return err
}

// skipSpace consumes JSON whitespace; io.EOF at the end of the body.
func (s *jsonScanner) skipSpace() error {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return s.r.UnreadByte()
	}
}

// maxNameBytes bounds a member name of the request object.
const maxNameBytes = 256

// readName reads a member name (its opening quote consumed) and decodes it.
func (s *jsonScanner) readName() (string, error) {
	var raw bytes.Buffer
	raw.WriteByte('"')
	if err := s.str(&raw, maxNameBytes); err != nil {
		if errors.Is(err, errOverBudget) {
			return "", errBadJSON{fmt.Sprintf("a member name is longer than %d bytes", maxNameBytes)}
		}
		return "", err
	}
	var name string
	if err := json.Unmarshal(raw.Bytes(), &name); err != nil {
		return "", errBadJSON{"a member name is not a valid JSON string"}
	}
	return name, nil
}

// value consumes one JSON value, appending its bytes to dst when dst is not
// nil; with budget >= 0, more than budget bytes give errOverBudget. It checks
// the structure (brackets, strings, nesting) but not scalars' spelling:
// gqlgen's decoder reads what passes, which is bounded by then.
func (s *jsonScanner) value(dst *bytes.Buffer, budget int64) error {
	var stack []byte // open brackets
	w := &budgetWriter{dst: dst, budget: budget}
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return s.eofIsBad(err, "the body ends inside a value")
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			if len(stack) == 0 {
				return errBadJSON{"expected a value"}
			}
			continue // not kept
		case '{', '[':
			if len(stack) >= maxJSONDepth {
				return errBadJSON{fmt.Sprintf("variables nest deeper than %d levels", maxJSONDepth)}
			}
			stack = append(stack, c)
			if err := w.put(c); err != nil {
				return err
			}
			continue
		case '}', ']':
			if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
				return errBadJSON{fmt.Sprintf("unexpected %q", c)}
			}
			stack = stack[:len(stack)-1]
			if err := w.put(c); err != nil {
				return err
			}
		case '"':
			if err := w.put(c); err != nil {
				return err
			}
			if err := s.strInto(w); err != nil {
				return err
			}
		case ',', ':':
			if len(stack) == 0 {
				return errBadJSON{fmt.Sprintf("unexpected %q", c)}
			}
			if err := w.put(c); err != nil {
				return err
			}
			continue
		default:
			if err := w.put(c); err != nil {
				return err
			}
			if err := s.scalar(w, len(stack) == 0); err != nil {
				return err
			}
		}
		if len(stack) == 0 {
			return nil
		}
	}
}

// budgetWriter appends to dst, when it is not nil, at most budget bytes
// (budget < 0: any number); n counts what it took.
type budgetWriter struct {
	dst       *bytes.Buffer
	budget, n int64
}

func (w *budgetWriter) put(c byte) error {
	if w.dst == nil {
		return nil
	}
	w.n++
	if w.budget >= 0 && w.n > w.budget {
		return errOverBudget
	}
	return w.dst.WriteByte(c)
}

// strInto consumes the rest of a string (its opening quote taken) into w.
func (s *jsonScanner) strInto(w *budgetWriter) error {
	left := int64(-1)
	if w.dst != nil && w.budget >= 0 {
		left = w.budget - w.n
	}
	before := 0
	if w.dst != nil {
		before = w.dst.Len()
	}
	if err := s.str(w.dst, left); err != nil {
		return err
	}
	if w.dst != nil {
		w.n += int64(w.dst.Len() - before)
	}
	return nil
}

// scalar consumes the rest of a scalar (number, true, false, null), its
// first byte taken, into w: it runs to a delimiter, or to the end of the
// body when it is the whole value (top).
func (s *jsonScanner) scalar(w *budgetWriter, top bool) error {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) && top {
				return nil
			}
			return s.eofIsBad(err, "the body ends inside a value")
		}
		if isDelimiter(c) {
			_ = s.r.UnreadByte()
			return nil
		}
		if err := w.put(c); err != nil {
			return err
		}
	}
}

func isDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ',', ':', '{', '}', '[', ']', '"':
		return true
	}
	return false
}

// str consumes the rest of a string (its opening quote consumed), closing
// quote included, appending its bytes to dst when dst is not nil; with
// budget >= 0, more than budget bytes give errOverBudget.
func (s *jsonScanner) str(dst *bytes.Buffer, budget int64) error {
	n := int64(0)
	escaped := false
	for {
		chunk, err := s.r.ReadSlice('"')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return s.eofIsBad(err, "the body ends inside a string")
		}
		if dst != nil {
			n += int64(len(chunk))
			if budget >= 0 && n > budget {
				return errOverBudget
			}
			dst.Write(chunk)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			escaped = trailingBackslashes(chunk, escaped)
			continue
		}
		// chunk ends with a quote: it closes the string unless escaped.
		if !trailingBackslashes(chunk[:len(chunk)-1], escaped) {
			return nil
		}
		escaped = false
	}
}

// trailingBackslashes reports whether the byte after b is escaped, given
// whether the first byte of b is (escaped: b follows an odd run of
// backslashes).
func trailingBackslashes(b []byte, escaped bool) bool {
	run := 0
	for i := len(b) - 1; i >= 0 && b[i] == '\\'; i-- {
		run++
	}
	if run == len(b) && escaped {
		// the whole chunk is backslashes continuing an escape: the first
		// one is escaped, the rest pair up from there.
		return run%2 == 0
	}
	return run%2 == 1
}
