package archive_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/archive"
)

// TestArchiveTerminalOutput: a document carries the artifact a
// terminal_exited event names (outputSha256); a malformed outputSha256 is
// refused naming its line, and a blob only a terminal of another document
// would name is still refused.
func TestArchiveTerminalOutput(t *testing.T) {
	out := []byte("ready\n")
	sum := sha256.Sum256(out)
	hash := hex.EncodeToString(sum[:])
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	doc := func(outputHash string, blobs map[string][]byte) []byte {
		created, err := core.NewEvent("ses_x", core.EventSessionCreated, core.SessionPayload{Session: core.SessionMeta{ID: "ses_x",
			ApprovalMode: core.ApprovalAsk, AgentMode: core.AgentExecute, CreatedAt: at}})
		if err != nil {
			t.Fatal(err)
		}
		exited, err := core.NewEvent("ses_x", core.EventTerminalExited, core.TerminalExitedPayload{
			Terminal: core.Terminal{ID: "term_1", SessionID: "ses_x", Command: "echo ready", Status: core.TerminalExited}, OutputSHA256: outputHash})
		if err != nil {
			t.Fatal(err)
		}
		created.Seq, created.At, exited.Seq, exited.At = 1, at, 2, at
		var order []string
		for h := range blobs {
			order = append(order, h)
		}
		var buf bytes.Buffer
		if err := archive.WriteSessionArchive(&buf, archive.ArchiveHeader{SessionID: "ses_x", ExportedAt: at}, []core.Event{created, exited}, order, blobs); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}

	a, err := archive.ParseSessionArchive(bytes.NewReader(doc(hash, map[string][]byte{hash: out})))
	if err != nil {
		t.Fatalf("a document with a terminal's output: %v", err)
	}
	if !bytes.Equal(a.Blobs[hash], out) || !bytes.Contains(a.Events[1].Payload, []byte(hash)) {
		t.Fatalf("parsed blobs %v, terminal_exited %s", a.Blobs, a.Events[1].Payload)
	}
	if _, err := archive.ParseSessionArchive(bytes.NewReader(doc(hash, nil))); err != nil {
		t.Fatalf("a document without the output's bytes: %v", err)
	}
	_, err = archive.ParseSessionArchive(bytes.NewReader(doc("ABC", nil)))
	if err == nil || !strings.Contains(err.Error(), "line 3: terminal_exited outputSha256") || core.ErrorCode(err) != core.CodeBadInput {
		t.Fatalf("a malformed outputSha256: %v", err)
	}
	_, err = archive.ParseSessionArchive(bytes.NewReader(doc("", map[string][]byte{hash: out})))
	if err == nil || !strings.Contains(err.Error(), "is not referred to by any event") {
		t.Fatalf("a blob no event names: %v", err)
	}
}
