package responses

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
)

// FuzzReadStream feeds arbitrary bytes to the Responses stream reader,
// seeded with the recorded streams (rendered as SSE): it must return, with
// a classified error or a finish reason, and forward only valid UTF-8.
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
		f.Add([]byte(sse(evs...)))
	}
	f.Add([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"code\":null}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := &rec{}
		finish, err := readStream(context.Background(), slog.New(slog.DiscardHandler), strings.NewReader(string(body)), r)
		if err != nil {
			var se *sdk.Error
			if !errors.As(err, &se) {
				t.Fatalf("unclassified error %T: %v", err, err)
			}
			return
		}
		if finish == "" {
			t.Fatalf("no finish reason without an error")
		}
	})
}
