package archive_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
)

// The seed corpus doubles as a table: valid documents parse (provider state
// dropped), broken ones are refused naming their line.
func TestParseSessionArchiveSeeds(t *testing.T) {
	for name, want := range map[string]string{
		"valid":                 "",
		"valid-crlf":            "",
		"rewind-and-checkpoint": "",
		"truncated":             "line 4: the document ends after 3 of the 4 events",
		"seq-gap":               "line 4: seq 5: expected 3",
		"blob-mismatch":         "line 6: data does not match its sha256",
	} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzParseSessionArchive", name))
			if err != nil {
				t.Fatal(err)
			}
			// go test fuzz v1, then []byte("…").
			lit := strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[1])
			doc, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lit, "[]byte("), ")"))
			if err != nil {
				t.Fatal(err)
			}
			a, err := archive.ParseSessionArchive(bytes.NewReader([]byte(doc)))
			if want == "" {
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range a.Events {
					if bytes.Contains(ev.Payload, []byte("providerState")) {
						t.Fatalf("provider state kept: %s", ev.Payload)
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), want) || core.ErrorCode(err) != core.CodeBadInput {
				t.Fatalf("got %v, want BAD_INPUT with %q", err, want)
			}
		})
	}
}
