package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// blobDoc is a document of one message whose attachment's bytes are
// blob, followed by line as its blob line.
func blobDoc(blob []byte, line string) []byte {
	sum := sha256.Sum256(blob)
	h := hex.EncodeToString(sum[:])
	return []byte(`{"format":"foya.session","version":1,"sessionId":"ses_x","exportedAt":"2026-01-01T00:00:00Z","events":2,"blobs":1}` + "\n" +
		`{"kind":"event","seq":1,"type":"session_created","at":"2026-01-01T00:00:00Z","payload":{"session":{"id":"ses_x","approvalMode":"ask","agentMode":"execute","createdAt":"2026-01-01T00:00:00Z"}}}` + "\n" +
		`{"kind":"event","seq":2,"type":"message_end","at":"2026-01-01T00:00:00Z","payload":{"message":{"role":"user","text":"hi","attachments":[{"id":"att_1","name":"a.bin","kind":"file","mediaType":"application/octet-stream","size":` +
		fmt.Sprint(len(blob)) + `,"sha256":"` + h + `"}]}}}` + "\n" +
		strings.ReplaceAll(line, "HASH", h) + "\n")
}

// parseBoth parses doc with the blob line read without encoding/json and
// with it, and returns what each gave: the error's text or the blobs
// handed to the sink.
func parseBoth(doc []byte) (fast, slow string) {
	run := func(slowLines bool) string {
		slowBlobLines = slowLines
		defer func() { slowBlobLines = false }()
		var sunk []string
		_, err := StreamSessionArchive(bytes.NewReader(doc), 0, func(hash string, data []byte) error {
			sunk = append(sunk, hash+"="+base64.StdEncoding.EncodeToString(data))
			return nil
		})
		if err != nil {
			return "error: " + err.Error()
		}
		return strings.Join(sunk, ",")
	}
	return run(false), run(true)
}

// The blob line as the export writes it is read without encoding/json;
// every line, exported or not, gives exactly what encoding/json's reading
// gives: the same blob, or the same error.
func TestExportedBlobLineReadsAsJSONDoes(t *testing.T) {
	blob := []byte("hello, blob")
	data := base64.StdEncoding.EncodeToString(blob)
	for _, line := range []string{
		`{"kind":"blob","sha256":"HASH","size":11,"data":"` + data + `"}`,
		`{"kind":"blob","sha256":"HASH","size":11,"data":"` + data[:4] + `\/` + data[5:] + `"}`, // an escape: encoding/json's way
		`{"kind":"blob","sha256":"HASH","size":011,"data":"` + data + `"}`,
		`{"kind":"blob","sha256":"HASH","size":12,"data":"` + data + `"}`,
		`{"kind":"blob","sha256":"HASH","size":11,"data":"` + data[:4] + "\r" + data[4:] + `"}`,
		`{"kind":"blob","sha256":"HASH","size":11,"data":"` + data[:4] + "\x01" + data[4:] + `"}`,
		`{"kind":"blob","sha256":"HASH","size":11,"data":"` + data[:4] + "!" + data[4:] + `"}`,
		`{"kind":"blob","sha256":"HASH","size":11,"data":"` + data + `"} `,
		`{"kind":"blob","sha256":"HASH","size":11,"data":"` + data + `"}{}`,
		`{"kind":"blob","sha256":"HASH","size":99999999999999999999,"data":"` + data + `"}`,
		`{"kind":"blob","sha256":"HASH","size":11,"data":""}`,
		`{"kind":"blob","sha256":"HASH","size":11,"data":"` + data + `","size":11}`,
	} {
		fast, slow := parseBoth(blobDoc(blob, line))
		if fast != slow {
			t.Errorf("%q:\nread as exported: %s\nread as JSON:     %s", line, fast, slow)
		}
	}
	if _, _, _, ok := exportedBlobLine([]byte(`{"kind":"blob","sha256":"` + strings.Repeat("0", 64) + `","size":11,"data":"` + data + `"}`)); !ok {
		t.Fatal("the export's own spelling is not read without encoding/json")
	}
}

// FuzzExportedBlobLine checks the same for arbitrary blob lines (seeds in
// testdata/fuzz/FuzzExportedBlobLine); HASH in a line stands for the
// blob's hash.
func FuzzExportedBlobLine(f *testing.F) {
	f.Add([]byte("hello, blob"), `{"kind":"blob","sha256":"HASH","size":11,"data":"aGVsbG8sIGJsb2I="}`)
	f.Add([]byte{}, `{"kind":"blob","sha256":"HASH","size":0,"data":""}`)
	f.Add([]byte("x"), `{"kind":"blob","sha256":"HASH","size":1,"data":"eA="}`)
	f.Fuzz(func(t *testing.T, blob []byte, line string) {
		if strings.ContainsAny(line, "\n") {
			return
		}
		fast, slow := parseBoth(blobDoc(blob, line))
		if fast != slow {
			t.Fatalf("%q:\nread as exported: %s\nread as JSON:     %s", line, fast, slow)
		}
	})
}

// BenchmarkStreamBlobLine reads a document with one blob of 1 MiB, its
// blob line read without encoding/json (exported) and with it (json).
func BenchmarkStreamBlobLine(b *testing.B) {
	blob := make([]byte, 1<<20)
	for i := range blob {
		blob[i] = byte(i * 7919 >> 3)
	}
	doc := blobDoc(blob, `{"kind":"blob","sha256":"HASH","size":1048576,"data":"`+base64.StdEncoding.EncodeToString(blob)+`"}`)
	for _, c := range []struct {
		name string
		slow bool
	}{{"exported", false}, {"json", true}} {
		b.Run(c.name, func(b *testing.B) {
			slowBlobLines = c.slow
			defer func() { slowBlobLines = false }()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, err := StreamSessionArchive(bytes.NewReader(doc), 0, func(string, []byte) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
