package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// decodeRequest decodes a JSON request the way gqlgen does (numbers kept
// as json.Number), into the four members it reads.
func decodeRequest(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for k, v := range m {
		for _, rm := range requestMembers {
			if strings.EqualFold(k, rm.name) {
				out[rm.name] = v
			}
		}
	}
	return out, nil
}

// chargedBytes is what the members charged to the budget weigh as
// compact JSON.
func chargedBytes(t testing.TB, b []byte) int64 {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("rebuilt body is not JSON: %v", err)
	}
	n := int64(0)
	for k, v := range m {
		if k == "variables" || k == "extensions" {
			var c bytes.Buffer
			if err := json.Compact(&c, v); err != nil {
				t.Fatal(err)
			}
			n += int64(c.Len())
		}
	}
	return n
}

func TestScanRequest(t *testing.T) {
	big := `[` + strings.Repeat(`1,`, 600) + `1]`
	for _, tc := range []struct {
		name, in string
		budget   int64
		want     string // the rebuilt body; "" when an error is expected
		err      any
	}{
		{"plain", `{"query":"{ a }"}`, 100, `{"query":"{ a }"}`, nil},
		{"all members, spaces dropped, unknown skipped", " {\n \"query\" : \"q\" , \"x\": [1, {\"y\": \"}\"}], \"variables\" : { \"a\" : [ 1 , 2 ] } ,\"operationName\":null,\"extensions\":{}}\n",
			100, `{"query":"q","variables":{"a":[1,2]},"operationName":null,"extensions":{}}`, nil},
		{"escapes", `{"query":"a\\\"b\\\\","variables":{"s":"\\\\\"}"}}`, 100, `{"query":"a\\\"b\\\\","variables":{"s":"\\\\\"}"}}`, nil},
		{"case of member names", `{"Query":"q","VARIABLES":{}}`, 100, `{"query":"q","variables":{}}`, nil},
		{"variables over budget", `{"query":"q","variables":{"a":` + big + `}}`, 1000, "", errVariablesTooLarge{}},
		{"a string over budget", `{"variables":{"a":"` + strings.Repeat("x", 2000) + `"}}`, 1000, "", errVariablesTooLarge{}},
		{"extensions share the budget", `{"variables":{"a":"` + strings.Repeat("x", 600) + `"},"extensions":{"b":"` + strings.Repeat("x", 600) + `"}}`, 1000, "", errVariablesTooLarge{}},
		{"a big query is not charged", `{"query":"` + strings.Repeat("x", 5000) + `"}`, 10, `{"query":"` + strings.Repeat("x", 5000) + `"}`, nil},
		{"duplicate", `{"query":"a","query":"b"}`, 100, "", errBadJSON{}},
		{"not an object", `[1,2]`, 100, "", errBadJSON{}},
		{"empty", ``, 100, "", errBadJSON{}},
		{"trailing data", `{"query":"a"} x`, 100, "", errBadJSON{}},
		{"truncated", `{"query":"a`, 100, "", errBadJSON{}},
		{"unbalanced", `{"variables":{"a":[1}}`, 100, "", errBadJSON{}},
		{"too deep", `{"variables":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, 1000, "", errBadJSON{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scanRequest(strings.NewReader(tc.in), tc.budget)
			if tc.err != nil {
				if err == nil || reflect.TypeOf(err) != reflect.TypeOf(tc.err) {
					t.Fatalf("err = %v (%T), want a %T", err, err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

// A body over the budget is refused having read little more than the budget.
func TestScanRequestStopsAtBudget(t *testing.T) {
	body := io.MultiReader(strings.NewReader(`{"query":"q","variables":{"ids":[`), &endless{})
	cr := &countingReader{r: body}
	_, err := scanRequest(cr, 1<<20)
	if !errors.As(err, new(errVariablesTooLarge)) {
		t.Fatalf("err = %v", err)
	}
	if cr.n > 1<<20+64<<10 {
		t.Fatalf("read %d bytes for a 1 MiB budget", cr.n)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "1,"[i%2]
	}
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// FuzzScanRequest checks the bounded decoder against encoding/json: what it
// passes decodes to what the original decodes to, within the budget; what
// it refuses as over the budget is over it; a valid request within the
// bounds is never refused.
func FuzzScanRequest(f *testing.F) {
	for _, s := range []string{
		`{"query":"{ a }","variables":{"a":[1,2,3]},"operationName":"x","extensions":{"persistedQuery":{"version":1}}}`,
		`{"query":"q\"\\","variables":{"s":"\\\\\"}]"},"other":[{"x":"]"}]}`,
		`{"variables":{"a":[[[[]]]]}, "Query": "x"}`,
		`{"variables": null}`,
		`{"variables":{"n":-1.5e10,"t":true,"f":false,"z":null}}`,
		` { } `,
		`{"query":"a","query":"b"}`,
		`{"variables":{"a":"` + strings.Repeat("x", 300) + `"}}`,
		`{"variables":[` + strings.Repeat("1,", 200) + `1]}`,
	} {
		f.Add([]byte(s), uint16(256))
	}
	f.Fuzz(func(t *testing.T, in []byte, budget16 uint16) {
		budget := int64(budget16)
		got, err := scanRequest(bytes.NewReader(in), budget)
		want, werr := decodeRequest(in)
		if err == nil {
			if werr == nil {
				if n := chargedBytes(t, got); n > budget {
					t.Fatalf("passed %d bytes of variables over a budget of %d", n, budget)
				}
			} else if int64(len(got)) > int64(len(in))+int64(len(`{"operationName":,"extensions":}`)) {
				t.Fatalf("rebuilt %d bytes from %d", len(got), len(in))
			}
			if werr != nil {
				// The scanner checks structure, not every scalar, and
				// skips unknown members unread: gqlgen's decoder refuses
				// what is left, having seen at most the budget.
				return
			}
			again, err := decodeRequest(got)
			if err != nil {
				t.Fatalf("rebuilt body %q does not decode: %v", got, err)
			}
			if !reflect.DeepEqual(again, want) {
				t.Fatalf("rebuilt body decodes to %v, the input to %v", again, want)
			}
			return
		}
		if werr != nil {
			return // refused, as encoding/json does
		}
		var over errVariablesTooLarge
		if errors.As(err, &over) {
			var m map[string]json.RawMessage
			if json.Unmarshal(in, &m) == nil {
				n := int64(0)
				for k, v := range m {
					if strings.EqualFold(k, "variables") || strings.EqualFold(k, "extensions") {
						var c bytes.Buffer
						_ = json.Compact(&c, v)
						n += int64(c.Len())
					}
				}
				if n <= budget && !hasDuplicates(in) {
					t.Fatalf("refused as over %d bytes, but its variables are %d bytes", budget, n)
				}
			}
		}
	})
}

// hasDuplicates reports whether the top-level object names a member twice
// (encoding/json keeps the last one; the scanner refuses it).
func hasDuplicates(in []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(in))
	if _, err := dec.Token(); err != nil {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		k := strings.ToLower(tok.(string))
		if seen[k] {
			return true
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}
