//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// terminalOutputHash waits for the session's terminal_exited event and
// returns its outputSha256.
func (k *kernelProc) terminalOutputHash(t *testing.T, sid string) string {
	t.Helper()
	k.waitEvents(t, sid, "terminal_exited", 1)
	for _, e := range k.eventLog(t, sid).Events {
		if e.Type == "terminal_exited" {
			var p struct{ OutputSha256 string }
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			return p.OutputSha256
		}
	}
	t.Fatalf("no terminal_exited in %s", sid)
	return ""
}

// TestTerminalOutputArtifact: the artifact a terminal leaves at its end
// travels with an export, is shared by the imported session, and its file
// leaves the data directory with the last session that names it.
func TestTerminalOutputArtifact(t *testing.T) {
	t.Parallel()
	base := outsideTmp(t)
	data := filepath.Join(base, "data")
	fake := openaitest.New(t)
	k := startKernel(t, data)
	ctx := context.Background()
	c := k.client()
	proj := filepath.Join(base, "proj")
	mkdirs(t, proj)

	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	id := k.startTerminal(t, fake, sid, "sh -c 'echo artifact-gc-e2e; sleep 30'")
	k.runTools(t, fake, sid, toolCall("tr-gc", "terminal_read", map[string]any{"id": id, "waitMs": 10000}))
	if _, err := client.KillTerminal(ctx, c, sid, id); err != nil {
		t.Fatal(err)
	}
	hash := k.terminalOutputHash(t, sid)
	if len(hash) != 64 {
		t.Fatalf("outputSha256 %q", hash)
	}
	file := filepath.Join(data, "artifacts", "sha256", hash[:2], hash[2:])
	if !exists(file) {
		t.Fatalf("no artifact file %s", file)
	}

	ex, err := client.ExportSession(ctx, c, sid)
	if err != nil {
		t.Fatal(err)
	}
	doc := ex.ExportSession
	if !strings.Contains(doc, `"kind":"blob","sha256":"`+hash+`"`) {
		t.Fatalf("the export does not carry the terminal's output:\n%s", doc)
	}
	imp, err := client.ImportSession(ctx, c, doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := k.terminalOutputHash(t, imp.ImportSession.Id); got != hash {
		t.Fatalf("imported terminal_exited outputSha256 %q, want %s", got, hash)
	}

	// A document without the bytes: the imported event names no output.
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(doc, "\n"), "\n") {
		if !strings.Contains(l, `"kind":"blob"`) {
			lines = append(lines, l)
		}
	}
	var h map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil {
		t.Fatal(err)
	}
	h["blobs"] = 0
	head, _ := json.Marshal(h)
	lines[0] = string(head)
	bare, err := client.ImportSession(ctx, c, strings.Join(lines, "\n")+"\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := k.terminalOutputHash(t, bare.ImportSession.Id); got != "" {
		t.Errorf("an import without the bytes names output %q", got)
	}

	k.deleteSession(t, sid)
	if !exists(file) {
		t.Fatal("deleting the exported session removed the artifact the imported one names")
	}
	k.deleteSession(t, bare.ImportSession.Id)
	k.deleteSession(t, imp.ImportSession.Id)
	if exists(file) {
		t.Fatal("the terminal's output artifact outlives every session that named it")
	}
}
