package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
)

// importBlob is blob i of the streamed-import document: incompressible
// bytes, made again whenever needed rather than kept.
func importBlob(i, size int) []byte {
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], uint64(i)+1)
	b := make([]byte, size)
	rand.NewChaCha8(seed).Read(b)
	return b
}

const base64Std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// encodeBase64Std is base64.StdEncoding.Encode(dst, src) without the race
// detector: under -race, encoding/base64 pays a detector call per byte, and
// the 80 MiB of blobs below took 3.6 s to encode (this takes 60 ms).
//
//go:norace
func encodeBase64Std(dst, src []byte) {
	di, si := 0, 0
	for n := len(src) / 3 * 3; si < n; si, di = si+3, di+4 {
		v := uint(src[si])<<16 | uint(src[si+1])<<8 | uint(src[si+2])
		dst[di], dst[di+1], dst[di+2], dst[di+3] = base64Std[v>>18&0x3F], base64Std[v>>12&0x3F], base64Std[v>>6&0x3F], base64Std[v&0x3F]
	}
	switch len(src) - si {
	case 1:
		v := uint(src[si]) << 16
		dst[di], dst[di+1], dst[di+2], dst[di+3] = base64Std[v>>18&0x3F], base64Std[v>>12&0x3F], '=', '='
	case 2:
		v := uint(src[si])<<16 | uint(src[si+1])<<8
		dst[di], dst[di+1], dst[di+2], dst[di+3] = base64Std[v>>18&0x3F], base64Std[v>>12&0x3F], base64Std[v>>6&0x3F], '='
	}
}

// A foya.session document of 80 MiB of blobs (107 MiB, over the old 64 MiB
// import limit) imports with `foya sessions import FILE` into a real
// `foya serve`, whose peak RSS grows by a fraction of the document: the
// CLI sends the file as it reads it, the kernel spools the upload to disk
// and stores each blob as it parses it.
func TestSessionsImportStreamsALargeDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and imports a 107 MiB document")
	}
	const blobs, blobSize = 80, 1 << 20
	path := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	now := time.Now().UTC()
	enc := json.NewEncoder(w)
	enc.Encode(archive.ArchiveHeader{Format: archive.ArchiveFormat, Version: archive.ArchiveVersion, SessionID: "ses_big", ExportedAt: now, Events: blobs + 1, Blobs: blobs})
	event := func(seq int, typ core.EventType, p any) {
		raw, _ := json.Marshal(p)
		enc.Encode(map[string]any{"kind": "event", "seq": seq, "type": typ, "at": now, "payload": json.RawMessage(raw)})
	}
	event(1, core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: "ses_big", ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: now}})
	hashes := make([]string, blobs)
	for i := range hashes {
		sum := sha256.Sum256(importBlob(i, blobSize))
		hashes[i] = hex.EncodeToString(sum[:])
		event(i+2, core.EventMessageEnd, core.MessagePayload{Message: core.Message{Role: core.RoleUser, Text: fmt.Sprintf("part %d", i),
			Attachments: []core.Attachment{{ID: fmt.Sprintf("att_%08d", i), Name: fmt.Sprintf("part%d.bin", i), Kind: "file", MediaType: "application/octet-stream", Size: blobSize, SHA256: hashes[i]}}}})
	}
	b64 := make([]byte, base64.StdEncoding.EncodedLen(blobSize))
	for i, h := range hashes {
		fmt.Fprintf(w, `{"kind":"blob","sha256":"%s","size":%d,"data":"`, h, blobSize)
		blob := importBlob(i, blobSize)
		encodeBase64Std(b64, blob)
		if i == 0 && string(b64) != base64.StdEncoding.EncodeToString(blob) {
			t.Fatal("encodeBase64Std differs from encoding/base64")
		}
		w.Write(b64)
		w.WriteString("\"}\n")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, _ := os.Stat(path)

	k := startKernel(t, t.TempDir())
	var o outputs
	_, hwm0 := procMemory(t, k.cmd.Process.Pid)
	start := time.Now()
	r := o.run(t, "", "sessions", "import", path, "--addr", k.addr, "--json")
	took := time.Since(start)
	rss1, hwm1 := procMemory(t, k.cmd.Process.Pid)
	var imported struct{ ID string }
	if err := json.Unmarshal([]byte(r.stdout), &imported); r.code != 0 || err != nil || imported.ID == "" {
		t.Fatalf("import: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	t.Logf("imported %d MiB (%d MiB of blobs) in %s; kernel VmHWM %d → %d KiB (+%d KiB), VmRSS after %d KiB",
		fi.Size()>>20, blobs*blobSize>>20, took.Round(time.Millisecond), hwm0, hwm1, hwm1-hwm0, rss1)
	if hwm1-hwm0 > 64<<10 {
		t.Fatalf("the kernel's peak RSS grew by %d MiB importing a %d MiB document", (hwm1-hwm0)>>10, fi.Size()>>20)
	}
	var s struct {
		Session struct {
			HeadSeq  int
			Messages []struct {
				Text        string
				Attachments []struct{ SHA256 string }
			}
		}
	}
	last, err := client.LastMessages(context.Background(), k.client(), imported.ID, 3)
	if err != nil {
		t.Fatalf("last messages: %v", err)
	}
	decodeAs(t, last, &s)
	if s.Session.HeadSeq != blobs+1 || len(s.Session.Messages) != 3 || s.Session.Messages[2].Text != fmt.Sprintf("part %d", blobs-1) ||
		len(s.Session.Messages[2].Attachments) != 1 || s.Session.Messages[2].Attachments[0].SHA256 != hashes[blobs-1] {
		t.Fatalf("imported session: %+v", s.Session)
	}
	if strings.Contains(r.stderr, "error") {
		t.Fatalf("import stderr: %s", r.stderr)
	}
}
