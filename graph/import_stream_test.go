package graph_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
)

// streamBlob is blob i of a streamed-import document: size pseudo-random
// (incompressible) bytes, made again whenever needed rather than kept.
func streamBlob(i, size int) []byte {
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], uint64(i)+1)
	b := make([]byte, size)
	rand.NewChaCha8(seed).Read(b)
	return b
}

// writeStreamDoc writes a foya.session document to path: a session with
// one user message per blob, each with one attachment, then the blobs
// (blobs of blobSize bytes). After goodBlobs blob lines, when bad is set,
// it writes that line instead of the rest. It returns the blobs' hashes.
func writeStreamDoc(t *testing.T, path string, blobs, blobSize, goodBlobs int, bad string) []string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	now := time.Now().UTC()
	hashes := make([]string, blobs)
	for i := range hashes {
		sum := sha256.Sum256(streamBlob(i, blobSize))
		hashes[i] = hex.EncodeToString(sum[:])
	}
	enc := json.NewEncoder(w)
	enc.Encode(archive.ArchiveHeader{Format: archive.ArchiveFormat, Version: archive.ArchiveVersion, SessionID: "ses_big", ExportedAt: now, Events: blobs + 1, Blobs: blobs})
	line := func(seq int, typ core.EventType, p any) {
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		enc.Encode(map[string]any{"kind": "event", "seq": seq, "type": typ, "at": now, "payload": json.RawMessage(raw)})
	}
	line(1, core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: "ses_big", ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: now}})
	for i, h := range hashes {
		line(i+2, core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleUser, Text: fmt.Sprintf("part %d", i),
			Attachments: []core.Attachment{{ID: fmt.Sprintf("att_%08d", i), Name: fmt.Sprintf("part%d.bin", i), Kind: "file", MediaType: "application/octet-stream", Size: int64(blobSize), SHA256: h}}}})
	}
	for i, h := range hashes {
		if bad != "" && i == goodBlobs {
			w.WriteString(bad + "\n")
			break
		}
		fmt.Fprintf(w, `{"kind":"blob","sha256":"%s","size":%d,"data":"`, h, blobSize)
		b64 := base64.NewEncoder(base64.StdEncoding, w)
		b64.Write(streamBlob(i, blobSize))
		b64.Close()
		w.WriteString("\"}\n")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return hashes
}

// importFileStreamed posts the file at path as importSessionFile's file,
// read from disk while it is sent (with its Content-Length).
func (k *testKernel) importFileStreamed(t *testing.T, path string) gqlResponse {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	var frame bytes.Buffer
	mw := multipart.NewWriter(&frame)
	ops, _ := json.Marshal(map[string]any{"query": `mutation($f: Upload!) { importSessionFile(file: $f) { id headSeq } }`, "variables": map[string]any{"f": nil}})
	mw.WriteField("operations", string(ops))
	mw.WriteField("map", `{"0": ["variables.f"]}`)
	mw.CreateFormFile("0", "big.jsonl")
	head := bytes.Clone(frame.Bytes())
	mw.Close()
	tail := frame.Bytes()[len(head):]
	req, _ := http.NewRequest(http.MethodPost, k.srv.URL+"/graphql", io.MultiReader(bytes.NewReader(head), f, bytes.NewReader(tail)))
	req.ContentLength = int64(len(head)) + fi.Size() + int64(len(tail))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out gqlResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("importSessionFile: %d %s", resp.StatusCode, raw)
	}
	return out
}

// heapPeak samples HeapInuse until stop is called and returns the peak.
func heapPeak() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// runtime/metrics reads the heap's classes without stopping the
		// world (runtime.ReadMemStats every 10 ms did, and under -race
		// those stops were half of the test's time). Objects plus unused
		// heap spans is MemStats.HeapInuse.
		samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
		for {
			metrics.Read(samples)
			if inuse := samples[0].Value.Uint64() + samples[1].Value.Uint64(); inuse > peak.Load() {
				peak.Store(inuse)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// A document whose blobs total more than the old 64 MiB document limit
// imports through importSessionFile with the kernel's heap growing by about
// one blob, not by the document: each blob goes to the artifact store as
// it is read. The session pages, and the export route gives its blobs back
// byte for byte.
func TestImportSessionFileStreamsLargeDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and imports a 67 MiB document")
	}
	const blobs, blobSize = 50, 1 << 20 // 50 MiB of blobs, 67 MiB of document
	k := newTestKernel(t)
	path := filepath.Join(t.TempDir(), "big.jsonl")
	hashes := writeStreamDoc(t, path, blobs, blobSize, 0, "")
	if fi, _ := os.Stat(path); fi.Size() <= 64<<20 {
		t.Fatalf("the document is %d bytes, not over the old limit", fi.Size())
	}

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	stop := heapPeak()
	resp := k.importFileStreamed(t, path)
	peak := stop()
	if len(resp.Errors) > 0 {
		t.Fatalf("importSessionFile: %+v", resp.Errors)
	}
	growth := int64(peak) - int64(base)
	t.Logf("import of %d MiB of blobs: heap in use %d MiB before, peak %d MiB (growth %d MiB)", blobs*blobSize>>20, base>>20, peak>>20, growth>>20)
	if growth > 40<<20 {
		t.Fatalf("the heap grew by %d MiB importing the document: it was held, not streamed", growth>>20)
	}
	var imp struct {
		ImportSessionFile struct {
			ID      string `json:"id"`
			HeadSeq int    `json:"headSeq"`
		} `json:"importSessionFile"`
	}
	if err := json.Unmarshal(resp.Data, &imp); err != nil {
		t.Fatal(err)
	}
	sid := imp.ImportSessionFile.ID
	if imp.ImportSessionFile.HeadSeq != blobs+1 {
		t.Fatalf("headSeq %d, want %d", imp.ImportSessionFile.HeadSeq, blobs+1)
	}

	// Paging returns every message once, with its attachment.
	var got []string
	after := 0
	for {
		var page struct {
			Session struct {
				Messages []struct {
					Seq         int    `json:"seq"`
					Text        string `json:"text"`
					Attachments []struct {
						SHA256 string `json:"sha256"`
					} `json:"attachments"`
				} `json:"messages"`
			} `json:"session"`
		}
		k.mustDo(t, `query($s: ID!, $a: Int) { session(id: $s) { messages(first: 10, afterSeq: $a) { seq text attachments { sha256 } } } }`,
			map[string]any{"s": sid, "a": after}, &page)
		if len(page.Session.Messages) == 0 {
			break
		}
		for _, m := range page.Session.Messages {
			if len(m.Attachments) != 1 || m.Text != fmt.Sprintf("part %d", len(got)) {
				t.Fatalf("message %d: %+v", m.Seq, m)
			}
			got = append(got, m.Attachments[0].SHA256)
			after = m.Seq
		}
	}
	if strings.Join(got, ",") != strings.Join(hashes, ",") {
		t.Fatalf("paged %d messages, want %d with the document's attachments in order", len(got), blobs)
	}
	for _, h := range hashes {
		if !k.blobs.Has(h) {
			t.Fatalf("blob %s is not in the artifact store", h)
		}
	}

	// The export route gives the same events (with the new ids) and the
	// same blob lines, byte for byte.
	res, err := http.Get(k.srv.URL + "/sessions/" + sid + "/export")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("export route: %s", res.Status)
	}
	exported, original := blobSection(t, res.Body), func() [32]byte {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return blobSection(t, f)
	}()
	if exported != original {
		t.Fatal("the re-exported blob lines differ from the imported document's")
	}
}

// blobSection reads a document and returns the SHA-256 of its blob lines,
// checking that it has blobs+1 events on the way.
func blobSection(t *testing.T, r io.Reader) [32]byte {
	t.Helper()
	br := bufio.NewReaderSize(r, 1<<20)
	h := sha256.New()
	events, blobLines := 0, 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			switch {
			case bytes.Contains(line, []byte(`"kind":"event"`)):
				events++
			case bytes.HasPrefix(line, []byte(`{"kind":"blob"`)):
				blobLines++
				h.Write(line)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if blobLines == 0 || events != blobLines+1 {
		t.Fatalf("a document of %d events and %d blobs", events, blobLines)
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// A document refused after some of its blobs were stored leaves nothing:
// no session and none of the blobs it stored.
func TestImportSessionFileRefusedAfterBlobsLeavesNothing(t *testing.T) {
	const blobs, blobSize = 12, 256 << 10
	k := newTestKernel(t)
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	hashes := writeStreamDoc(t, path, blobs, blobSize, 5, `{"kind":"blob","sha256":"not a hash","size":1,"data":"AA=="}`)
	resp := k.importFileStreamed(t, path)
	if len(resp.Errors) != 1 || resp.Errors[0].Extensions.Code != "BAD_INPUT" || !strings.Contains(resp.Errors[0].Message, fmt.Sprintf("line %d", blobs+2+5+1)) {
		t.Fatalf("want BAD_INPUT naming the bad line, got %+v", resp.Errors)
	}
	for i, h := range hashes {
		if k.blobs.Has(h) {
			t.Fatalf("blob %d of the refused document is still stored", i)
		}
	}
	var s struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	k.mustDo(t, `{ sessions(includeChildren: true) { id } }`, nil, &s)
	if len(s.Sessions) != 0 {
		t.Fatalf("the refused import left sessions: %+v", s.Sessions)
	}
}

// A multipart request without a Content-Length (chunked) is held in memory
// by the transport, so it keeps the 64 MiB bound: a larger one is refused
// (gqlgen's transport answers 422 BAD_INPUT "failed to read file for key 0").
func TestImportSessionFileChunkedOverBoundRefused(t *testing.T) {
	k := newTestKernel(t)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		ops, _ := json.Marshal(map[string]any{"query": `mutation($f: Upload!) { importSessionFile(file: $f) { id } }`, "variables": map[string]any{"f": nil}})
		mw.WriteField("operations", string(ops))
		mw.WriteField("map", `{"0": ["variables.f"]}`)
		fw, _ := mw.CreateFormFile("0", "big.jsonl")
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for i := 0; i < 65; i++ {
			if _, err := fw.Write(chunk); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(mw.Close())
	}()
	req, _ := http.NewRequest(http.MethodPost, k.srv.URL+"/graphql", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out gqlResponse
	if json.Unmarshal(raw, &out) != nil || resp.StatusCode/100 != 4 || len(out.Errors) != 1 || out.Errors[0].Extensions.Code != "BAD_INPUT" {
		t.Fatalf("a 65 MiB chunked upload: %d %.300s", resp.StatusCode, raw)
	}
	var ss struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	k.mustDo(t, `{ sessions(includeChildren: true) { id } }`, nil, &ss)
	if len(ss.Sessions) != 0 {
		t.Fatalf("the refused upload left sessions: %+v", ss.Sessions)
	}
}
