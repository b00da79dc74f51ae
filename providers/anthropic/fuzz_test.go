package anthropic

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
)

// FuzzReadStream feeds arbitrary bytes to the Messages stream reader,
// seeded with the recorded streams (rendered as SSE): it must return with
// a classified error or a finish reason, and send native state only for a
// complete message.
func FuzzReadStream(f *testing.F) {
	files, _ := filepath.Glob("testdata/recorded/*.txt")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var evs []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(l) != "" {
				evs = append(evs, l)
			}
		}
		f.Add([]byte(events(evs...)))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := &rec{}
		finish, err := readStream(context.Background(), strings.NewReader(string(body)), r)
		if err != nil {
			var se *sdk.Error
			if !errors.As(err, &se) {
				t.Fatalf("unclassified error %T: %v", err, err)
			}
			if r.StateOut != nil {
				t.Fatalf("state sent for a failed stream")
			}
			return
		}
		if finish == "" {
			t.Fatalf("no finish reason without an error")
		}
	})
}

// FuzzWebSearchAnswer feeds arbitrary bytes to the web search answer
// parser, seeded with the recorded answer of the real API: it returns a
// classified error, or an answer with text and at most maxSources
// distinct sources.
func FuzzWebSearchAnswer(f *testing.F) {
	files, _ := filepath.Glob("testdata/recorded/*.json")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"content":[{"type":"web_search_tool_result","content":{"type":"web_search_tool_result_error","error_code":"unavailable"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		res, err := parseWebSearch(strings.NewReader(string(body)))
		if err != nil {
			var se *sdk.Error
			if !errors.As(err, &se) {
				t.Fatalf("unclassified error %T: %v", err, err)
			}
			return
		}
		if strings.TrimSpace(res.Text) == "" || len(res.Sources) > maxSources {
			t.Fatalf("answer without text or with %d sources", len(res.Sources))
		}
		seen := map[string]bool{}
		for _, s := range res.Sources {
			if s.URL == "" || seen[s.URL] {
				t.Fatalf("source %+v empty or twice", s)
			}
			seen[s.URL] = true
		}
	})
}
