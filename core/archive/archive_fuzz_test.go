package archive_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
)

var archiveErrRe = regexp.MustCompile(`^line [0-9]+: `)

// FuzzParseSessionArchive drives the importer's parser with arbitrary
// documents (seeds in testdata/fuzz/FuzzParseSessionArchive). It must not
// panic; a refusal is a BAD_INPUT naming a line; an accepted document has
// consecutive seqs from 1 starting with session_created, blobs that match
// their hashes, no provider-native state, and writes back to a document
// that parses to the same events and blobs.
func FuzzParseSessionArchive(f *testing.F) {
	if seed, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzParseSessionArchive", "valid")); err == nil {
		f.Add(seed) // the corpus file itself is added by go test; this keeps a seed when it is absent
	}
	f.Add([]byte(""))
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"format":"foya.session","version":1,"sessionId":"ses_x","exportedAt":"2026-01-01T00:00:00Z","events":1,"blobs":0}` + "\n" +
		`{"kind":"event","seq":1,"type":"session_created","at":"2026-01-01T00:00:00Z","payload":{"session":{"id":"ses_x","approvalMode":"ask","agentMode":"execute","createdAt":"2026-01-01T00:00:00Z"}}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		a, err := archive.ParseSessionArchive(bytes.NewReader(doc))
		// The streaming parse (an import's) takes exactly the same
		// documents and hands on exactly the blobs that were checked.
		var sunk []string
		sa, serr := archive.StreamSessionArchive(bytes.NewReader(doc), 0, func(hash string, data []byte) error {
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != hash {
				t.Fatalf("sink got blob %s whose bytes do not match", hash)
			}
			sunk = append(sunk, hash)
			return nil
		})
		if (err == nil) != (serr == nil) || err != nil && err.Error() != serr.Error() {
			t.Fatalf("ParseSessionArchive: %v; StreamSessionArchive: %v", err, serr)
		}
		if err == nil && (len(sa.Blobs) != 0 || strings.Join(sunk, ",") != strings.Join(a.BlobOrder, ",")) {
			t.Fatalf("the streaming parse kept %d blobs and handed on %v, want %v", len(sa.Blobs), sunk, a.BlobOrder)
		}
		if err != nil {
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Code != core.CodeBadInput || !archiveErrRe.MatchString(ce.Message) {
				t.Fatalf("refusal %v is not a BAD_INPUT naming a line", err)
			}
			return
		}
		if len(a.Events) == 0 || a.Events[0].Type != core.EventSessionCreated || len(a.Events) != a.Header.Events || len(a.BlobOrder) != a.Header.Blobs {
			t.Fatalf("accepted a malformed document: %d events, header %+v", len(a.Events), a.Header)
		}
		for i, ev := range a.Events {
			if ev.Seq != int64(i)+1 {
				t.Fatalf("event %d has seq %d", i, ev.Seq)
			}
			if strings.Contains(string(ev.Payload), `"providerState"`) && (ev.Type == core.EventMessageEnd || ev.Type == core.EventMessageImported || ev.Type == core.EventCompactionCheckpoint) {
				t.Fatalf("provider state kept in %s", ev.Type)
			}
		}
		for h, data := range a.Blobs {
			sum := sha256.Sum256(data)
			if hex.EncodeToString(sum[:]) != h {
				t.Fatalf("blob %s does not match its bytes", h)
			}
		}
		var out bytes.Buffer
		if err := archive.WriteSessionArchive(&out, a.Header, a.Events, a.BlobOrder, a.Blobs); err != nil {
			t.Fatal(err)
		}
		b, err := archive.ParseSessionArchive(&out)
		if err != nil {
			t.Fatalf("the written document does not parse: %v\n%s", err, out.String())
		}
		if len(b.Events) != len(a.Events) || len(b.BlobOrder) != len(a.BlobOrder) {
			t.Fatal("the written document lost events or blobs")
		}
		for i := range a.Events {
			x, y := a.Events[i], b.Events[i]
			if x.Seq != y.Seq || x.Type != y.Type || !x.At.Equal(y.At) || !bytes.Equal(x.Payload, y.Payload) {
				t.Fatalf("event %d changed on a round trip:\n%s\n%s", i, x.Payload, y.Payload)
			}
		}
	})
}
