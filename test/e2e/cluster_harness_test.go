package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/storage/catalogfile"
	"github.com/foya-dev/foya/storage/pgtest"
)

// clusterEvent is what the cluster tests read of sessionEvents.
type clusterEvent struct {
	Seq     *int64
	Type    string
	Delta   *string
	Message *struct{ Role, Text string }
	Payload json.RawMessage
}

// watcher is an SSE sessionEvents subscriber that records what it sees.
type watcher struct {
	mu     sync.Mutex
	events []clusterEvent
	err    error
	resp   *http.Response
	change chan struct{}
}

func watch(t *testing.T, k *kernelProc, sid string) *watcher {
	t.Helper()
	return watchFields(t, k, sid, "seq type delta message { role text }")
}

// watchFields subscribes with the given selection of SessionEvent (a raw
// document: each test picks the fields, read off the SSE stream).
func watchFields(t *testing.T, k *kernelProc, sid, fields string) *watcher {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"query":     `subscription($s: ID!) { sessionEvents(sessionId: $s, afterSeq: 0) { ` + fields + ` } }`,
		"variables": map[string]any{"s": sid},
	})
	req, _ := http.NewRequest(http.MethodPost, k.url()+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{resp: resp, change: make(chan struct{}, 1)}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		br := bufio.NewReaderSize(resp.Body, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
				w.notify()
				return
			}
			data, ok := bytes.CutPrefix(line, []byte("data:"))
			if !ok {
				continue
			}
			var m struct {
				Data   struct{ SessionEvents clusterEvent }
				Errors []json.RawMessage
			}
			if err := json.Unmarshal(bytes.TrimSpace(data), &m); err != nil || len(m.Errors) > 0 {
				w.mu.Lock()
				w.err = fmt.Errorf("bad event %s: %v", data, err)
				w.mu.Unlock()
				w.notify()
				return
			}
			w.mu.Lock()
			w.events = append(w.events, m.Data.SessionEvents)
			w.mu.Unlock()
			w.notify()
		}
	}()
	return w
}

func (w *watcher) notify() {
	select {
	case w.change <- struct{}{}:
	default:
	}
}

// waitCount waits until the watcher saw n events of type typ.
func (w *watcher) waitCount(t *testing.T, typ string, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		w.mu.Lock()
		got := 0
		for _, e := range w.events {
			if e.Type == typ {
				got++
			}
		}
		err := w.err
		w.mu.Unlock()
		if got >= n {
			return
		}
		if err != nil {
			t.Fatalf("subscription ended before %d %s: %v", n, typ, err)
		}
		select {
		case <-w.change:
		case <-deadline:
			t.Fatalf("fewer than %d %s events after 30s", n, typ)
		}
	}
}

// seqs returns the persisted seqs seen, and the text of the deltas.
func (w *watcher) seqs() (seqs []int64, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, e := range w.events {
		if e.Seq != nil {
			seqs = append(seqs, *e.Seq)
		} else if e.Type == "message_delta" && e.Delta != nil {
			b.WriteString(*e.Delta)
		}
	}
	return seqs, b.String()
}

type clusterNode struct {
	*kernelProc
	data string
}

// startCluster starts n kernels on one fresh PostgreSQL database. The
// connections file of the first is copied to the others when the catalog
// is still per data directory (harmless once it is in the database).
func startCluster(t *testing.T, n int) (string, []*clusterNode) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	var nodes []*clusterNode
	for range n {
		nodes = append(nodes, addNode(t, url))
	}
	return url, nodes
}

// addNode starts a kernel on the database; seed (optional) gives it the
// connections file of that node first (while the catalog is per data
// directory; harmless once it is in the database).
func addNode(t testing.TB, url string, seed ...*clusterNode) *clusterNode {
	t.Helper()
	return addNodeArgs(t, url, nil, seed...)
}

// addNodeArgs is addNode with extra flags for foya serve.
func addNodeArgs(t testing.TB, url string, extra []string, seed ...*clusterNode) *clusterNode {
	t.Helper()
	dir := t.TempDir()
	for _, from := range seed {
		if raw, err := os.ReadFile(filepath.Join(from.data, catalogfile.FileName)); err == nil {
			if err := os.WriteFile(filepath.Join(dir, catalogfile.FileName), raw, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	key := clusterKey(t, url)
	// Every node shares the bearer token (docs/cluster.md): a forwarded
	// command carries the client's Authorization header.
	args := append([]string{"--database", url, "--secret-key-file", key, "--auth-token-file", filepath.Join(filepath.Dir(key), "auth-token")}, extra...)
	return &clusterNode{kernelProc: startKernel(t, dir, args...), data: dir}
}

var clusterKeys sync.Map // database URL → secret key file

// clusterKey is the secret key file every node of a test's cluster shares.
func clusterKey(t testing.TB, url string) string {
	if v, ok := clusterKeys.Load(url); ok {
		return v.(string)
	}
	path := filepath.Join(t.TempDir(), "secret-key")
	v, _ := clusterKeys.LoadOrStore(url, path)
	return v.(string)
}
