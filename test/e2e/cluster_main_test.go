package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
	"github.com/foya-dev/foya/storage/pgtest"
)

// Three kernels on one database: a session created on A, watched on A, B
// and C, written to on C (the command is forwarded to A, its owner): all
// three subscribers see the same seqs and the whole reply.
func TestClusterForwardingAndFanOut(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	_, ns := startCluster(t, 3)
	a, b, c := ns[0], ns[1], ns[2]
	sid := a.chatSession(t, fake.BaseURL())
	ws := []*watcher{watch(t, a.kernelProc, sid), watch(t, b.kernelProc, sid), watch(t, c.kernelProc, sid)}
	for _, w := range ws {
		w.waitCount(t, "session_created", 1)
	}
	parts := []string{"Many ", "kernels, ", "one ", "session: ", "every ", "node ", "sees ", "it."}
	fake.Enqueue(openaitest.TextStream("gpt-t", parts...))
	r := c.sendMessage(t, sid, "hi")
	if !r.SendMessage.TurnStarted {
		t.Fatal("sendMessage on C did not start a turn")
	}
	for _, w := range ws {
		w.waitCount(t, "turn_finished", 1)
	}
	// The phase goes idle after turn_finished: wait for the head on A.
	a.waitEvent(t, sid, "turn_finished")
	head := a.eventLog(t, sid)
	last := int64(head.Events[len(head.Events)-1].Seq)
	for _, w := range ws {
		w.waitCount(t, "phase_changed", 2)
	}
	want := strings.Join(parts, "")
	var first []int64
	for i, w := range ws {
		seqs, text := w.seqs()
		for j, s := range seqs {
			if s != int64(j+1) {
				t.Fatalf("subscriber %d: seqs %v (gap or duplicate)", i, seqs)
			}
		}
		if i == 0 {
			first = seqs
		} else if fmt.Sprint(seqs) != fmt.Sprint(first) {
			t.Fatalf("subscriber %d saw %v, subscriber 0 saw %v", i, seqs, first)
		}
		if text != want {
			t.Fatalf("subscriber %d: delta text %q, want %q", i, text, want)
		}
	}
	if first[len(first)-1] != last {
		t.Fatalf("subscribers stopped at %d, log head %d", first[len(first)-1], last)
	}
	// The turn ran on A: the model request came from A's plugin, once.
	if n := len(fake.Requests()); n < 1 {
		t.Fatalf("%d model requests", n)
	}
	// nodes on B: three nodes, A owns the session.
	nodes := b.listNodes(t)
	if len(nodes.Nodes) != 3 {
		t.Fatalf("nodes: %+v", nodes.Nodes)
	}
	owners := map[string]int{}
	for _, n := range nodes.Nodes {
		owners[n.AdvertiseUrl] = n.SessionsOwned
	}
	if owners[a.url()] != 1 || owners[b.url()] != 0 || owners[c.url()] != 0 {
		t.Fatalf("sessions owned by advertise URL: %v (A is %s)", owners, a.url())
	}
	// Queue and session state asked of B come from A, the owner.
	s := b.sessionDetail(t, sid)
	if s.Session.Phase != "IDLE" {
		t.Fatalf("phase seen on B: %s", s.Session.Phase)
	}

	// Delete on B: forwarded to A; every subscriber ends with
	// session_deleted and every node forgets the session.
	b.deleteSession(t, sid)
	for i, w := range ws {
		w.waitCount(t, "session_deleted", 1)
		_ = i
	}
	for _, k := range ns {
		var got struct{ Session *struct{ ID string } }
		decodeAs(t, k.sessionInfo(t, sid), &got)
		if got.Session != nil {
			t.Fatalf("session still visible on %s", k.url())
		}
	}
}

// kill -9 of the owner mid-turn: the next message, sent to another node,
// runs there once the owner's lease expired; the interrupted turn ends
// cancelled once, as at a restart, and a subscriber on a surviving node
// sees every event without a gap.
func TestClusterOwnerKilledMidTurn(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	url := pgtest.NewDatabase(t)
	a := addNode(t, url)
	sid := a.chatSession(t, fake.BaseURL())
	b, c := addNode(t, url, a), addNode(t, url, a)
	w := watch(t, b.kernelProc, sid)
	fake.Enqueue(openaitest.TextStream("gpt-t", "First answer."))
	b.sendMessage(t, sid, "one")
	w.waitCount(t, "turn_finished", 1)

	fake.Enqueue(openaitest.Response{Hang: true, Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"role": "assistant", "content": "half a sent"}, ""),
	}})
	c.sendMessage(t, sid, "two")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for len(fake.Requests()) < 2 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	w.waitCount(t, "message_delta", 2) // the half answer reached B
	a.cmd.Process.Signal(syscall.SIGKILL)
	<-a.done

	fake.Enqueue(openaitest.TextStream("gpt-t", "Back."))
	r := b.sendMessage(t, sid, "three")
	if !r.SendMessage.TurnStarted {
		t.Fatalf("the message after the owner died did not start a turn:\n%s", b.Logs())
	}
	b.waitEvents(t, sid, "turn_finished", 3)
	evs := c.eventLog(t, sid)
	started, finished, cancelled := 0, 0, 0
	for _, e := range evs.Events {
		switch e.Type {
		case "turn_started":
			started++
		case "turn_finished":
			finished++
			var p struct{ Status string }
			json.Unmarshal(e.Payload, &p)
			if p.Status == "cancelled" {
				cancelled++
			}
		}
	}
	if started != 3 || finished != 3 || cancelled != 1 {
		t.Fatalf("turns started %d, finished %d, cancelled %d", started, finished, cancelled)
	}
	s := c.getSession(t, sid)
	var texts []string
	for _, m := range s.Session.Messages {
		texts = append(texts, string(m.Role)+":"+m.Text)
	}
	if got := strings.Join(texts, "|"); got != "USER:one|ASSISTANT:First answer.|USER:two|USER:three|ASSISTANT:Back." {
		t.Fatalf("history: %s", got)
	}
	// B's subscriber lived through it all: every seq once, in order.
	w.waitCount(t, "turn_finished", 3)
	seqs, _ := w.seqs()
	for j, q := range seqs {
		if q != int64(j+1) {
			t.Fatalf("seqs on B: %v", seqs)
		}
	}
	// The session now belongs to B (the node that ran the command).
	nodes := c.listNodes(t)
	for _, n := range nodes.Nodes {
		if n.AdvertiseUrl == b.url() && n.SessionsOwned != 1 {
			t.Fatalf("nodes: %+v", nodes.Nodes)
		}
	}
}

// Alone on SQLite the nodes query lists this kernel, owning every session.
func TestNodesQueryAlone(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	k.createSession(t, client.CreateSessionInput{Title: ptr("x")})
	got := k.listNodes(t)
	if len(got.Nodes) != 1 || got.Nodes[0].Id != "local" || got.Nodes[0].AdvertiseUrl != k.url() || got.Nodes[0].SessionsOwned != 1 || got.Nodes[0].StartedAt.IsZero() {
		t.Fatalf("nodes: %+v", got.Nodes)
	}
}

func TestServeRefusesBadAdvertiseURL(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"10.0.0.5:4777", "ftp://h:1", "http://h:1/graphql"} {
		out, err := exec.Command(foyaBin, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--advertise-url", v).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--advertise-url") {
			t.Fatalf("%s accepted or unclear: %v\n%s", v, err, out)
		}
	}
}

// A catalog change made on A is what B's next turn uses: the connection's
// base URL moves to another provider on A, and B (the session's owner)
// sends its next model request there.
func TestClusterCatalogChangeOnAUsedByB(t *testing.T) {
	t.Parallel()
	first, second := openaitest.New(t), openaitest.New(t)
	url := pgtest.NewDatabase(t)
	a, b := addNode(t, url), addNode(t, url)
	c := a.createConnection(t, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(first.BaseURL()), ApiKey: ptr("sk-cluster-secret"), Models: []client.ModelInput{{Id: "gpt-t"}}})
	sid := b.createSession(t, client.CreateSessionInput{ConnectionId: ptr(c), Title: ptr("t"), ApprovalMode: ptr(client.ApprovalModeBypass)})
	first.Enqueue(openaitest.TextStream("gpt-t", "from the first"))
	b.sendMessage(t, sid, "one")
	b.waitEvent(t, sid, "turn_finished")
	if len(first.Requests()) != 1 {
		t.Fatalf("first provider got %d requests", len(first.Requests()))
	}

	// Another origin needs the key again in the same update (issue 28).
	a.updateConnection(t, c, client.ConnectionInput{BaseUrl: ptr(second.BaseURL()), ApiKey: ptr("sk-cluster-secret")})
	second.Enqueue(openaitest.TextStream("gpt-t", "from the second"))
	b.sendMessage(t, sid, "two")
	b.waitEvents(t, sid, "turn_finished", 2)
	if len(second.Requests()) != 1 || len(first.Requests()) != 1 {
		t.Fatalf("requests: first %d, second %d", len(first.Requests()), len(second.Requests()))
	}
	if got := second.LastRequest().Header.Get("Authorization"); got != "Bearer sk-cluster-secret" {
		t.Fatalf("B sent Authorization %q", got)
	}
	msgs := a.getSession(t, sid)
	if n := len(msgs.Session.Messages); n != 4 || msgs.Session.Messages[3].Text != "from the second" {
		t.Fatalf("messages: %+v", msgs.Session.Messages)
	}
	if !strings.Contains(b.Logs(), "session created") {
		t.Fatal("B did not create the session")
	}
}

// kernelEvents subscribers on every node see what happens on any node.
func TestClusterKernelEvents(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	a, b := addNode(t, url), addNode(t, url)
	// Raw: a subscription over SSE, read line by line.
	body, _ := json.Marshal(map[string]any{"query": `subscription { kernelEvents { type sessionId } }`})
	req, _ := http.NewRequest(http.MethodPost, b.url()+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := make(chan string, 16)
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				close(got)
				return
			}
			if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				var m struct {
					Data struct {
						KernelEvents struct{ Type, SessionID string }
					}
				}
				if json.Unmarshal(bytes.TrimSpace(data), &m) == nil {
					got <- m.Data.KernelEvents.Type + " " + m.Data.KernelEvents.SessionID
				}
			}
		}
	}()
	time.Sleep(300 * time.Millisecond) // the subscription is registered
	s := a.createSession(t, client.CreateSessionInput{Title: ptr("k")})
	a.deleteSession(t, s)
	want := []string{"session_created " + s, "session_deleted " + s}
	timeout := time.After(20 * time.Second)
	for len(want) > 0 {
		select {
		case ev, ok := <-got:
			if !ok {
				t.Fatal("kernelEvents ended")
			}
			if ev == want[0] {
				want = want[1:]
			}
		case <-timeout:
			t.Fatalf("B's kernelEvents never saw %q", want[0])
		}
	}
}

// The owner is killed and a new process starts at the same address before
// the old lease expired: a command forwarded there waits for the lease to
// expire and runs on the new process, or, when another node took the
// session over meanwhile, is passed on to it (not an error, not a loop).
func TestClusterOwnerRestartedAtSameAddress(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	url := pgtest.NewDatabase(t)
	a := addNode(t, url)
	sid := a.chatSession(t, fake.BaseURL())
	b := addNode(t, url)
	fake.Enqueue(openaitest.Response{Hang: true, Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"role": "assistant", "content": "half"}, ""),
	}})
	b.sendMessage(t, sid, "one")
	for deadline := time.Now().Add(20 * time.Second); len(fake.Requests()) < 1 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	a.cmd.Process.Signal(syscall.SIGKILL)
	<-a.done
	a2 := &clusterNode{kernelProc: startKernel(t, a.data, "--database", url, "--secret-key-file", clusterKey(t, url),
		"--auth-token-file", filepath.Join(filepath.Dir(clusterKey(t, url)), "auth-token"), "--addr", a.addr), data: a.data}
	if a2.addr != a.addr {
		t.Fatalf("restarted at %s, not %s", a2.addr, a.addr)
	}
	fake.Enqueue(openaitest.TextStream("gpt-t", "Again."))
	r := b.sendMessage(t, sid, "two")
	if !r.SendMessage.TurnStarted {
		t.Fatal("no turn started")
	}
	b.waitEvents(t, sid, "turn_finished", 2)
	// Whichever live node took the session over first (the new process at
	// a's address once the dead one's lease expired, or b's sweep, in
	// which case a2 passed the forwarded request on to b) owns it now.
	nodes := b.listNodes(t)
	owned, total := 0, 0
	for _, n := range nodes.Nodes {
		total += n.SessionsOwned
		if n.AdvertiseUrl == a2.url() || n.AdvertiseUrl == b.url() {
			owned += n.SessionsOwned
		}
	}
	if owned != 1 || total != 1 {
		t.Fatalf("the session is not owned by exactly one live node (%s or %s): %+v", a2.url(), b.url(), nodes.Nodes)
	}
}

// A command sent over graphql-transport-ws to a node that does not own the
// session is forwarded too.
func TestClusterMutationOverWebSocketForwarded(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	url := pgtest.NewDatabase(t)
	a := addNode(t, url)
	sid := a.chatSession(t, fake.BaseURL())
	b := addNode(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fake.Enqueue(openaitest.TextStream("gpt-t", "over ws"))
	// Raw: a mutation sent as a graphql-transport-ws subscribe message.
	ws, err := dialSub(ctx, b.addr, `mutation($s: ID!) { sendMessage(sessionId: $s, input: {text: "hi"}) { turnStarted } }`, map[string]any{"s": sid})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.close()
	_, raw, err := ws.conn.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"turnStarted":true`) {
		t.Fatalf("answer over WebSocket: %s", raw)
	}
	a.waitEvent(t, sid, "turn_finished")
	if len(fake.Requests()) != 1 {
		t.Fatalf("model requests: %d", len(fake.Requests()))
	}
	nodes := b.listNodes(t)
	for _, n := range nodes.Nodes {
		if (n.AdvertiseUrl == a.url()) != (n.SessionsOwned == 1) {
			t.Fatalf("the turn did not stay on A: %+v", nodes.Nodes)
		}
	}
}

// A queue behind a running turn on A, and a queue_snapshot of ~100 KB:
// the subscriber on B (not the owner) receives the snapshot whole, in
// order, and the sessions list on B answers queue and contextUsage from A.
func TestClusterLargeQueueSnapshotAndRemoteState(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	_, ns := startCluster(t, 2)
	a, b := ns[0], ns[1]
	sid := a.chatSession(t, fake.BaseURL())
	w := watchFields(t, b.kernelProc, sid, "seq type delta payload")
	w.waitCount(t, "session_created", 1)
	fake.Enqueue(openaitest.Response{Hang: true, Events: []string{
		openaitest.Chunk("gpt-t", map[string]any{"role": "assistant", "content": "busy"}, ""),
	}})
	b.sendMessage(t, sid, "start")
	w.waitCount(t, "message_delta", 1)
	const items = 30
	for i := range items {
		text := fmt.Sprintf("%02d:", i) + strings.Repeat("q", 3500)
		b.sendMessage(t, sid, text)
	}
	w.waitCount(t, "queue_snapshot", items)
	w.mu.Lock()
	var last clusterEvent
	var snaps int
	for _, e := range w.events {
		if e.Type == "queue_snapshot" {
			last = e
			snaps++
		}
	}
	w.mu.Unlock()
	if len(last.Payload) < 100_000 {
		t.Fatalf("last queue_snapshot on B: %d bytes", len(last.Payload))
	}
	var snap struct {
		Items []struct{ Input struct{ Text string } }
	}
	if err := json.Unmarshal(last.Payload, &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Items) != items || !strings.HasPrefix(snap.Items[items-1].Input.Text, fmt.Sprintf("%02d:", items-1)) {
		t.Fatalf("last snapshot on B holds %d items", len(snap.Items))
	}

	// The sessions list on B (not forwarded) answers from A, the owner.
	// Raw documents: the same selection on both nodes, compared as is.
	var list struct {
		Sessions []struct {
			ID           string
			Queue        []struct{ ID string }
			ContextUsage *struct{ Tokens, Limit int64 }
		}
	}
	b.gql(t, `{ sessions { id queue { id } contextUsage { tokens limit } } }`, nil, &list)
	var onA struct {
		Session struct {
			Queue        []struct{ ID string }
			ContextUsage *struct{ Tokens, Limit int64 }
		}
	}
	a.gql(t, `query($s: ID!) { session(id: $s) { queue { id } contextUsage { tokens limit } } }`, map[string]any{"s": sid}, &onA)
	found := false
	for _, s := range list.Sessions {
		if s.ID != sid {
			continue
		}
		found = true
		if fmt.Sprint(s.Queue) != fmt.Sprint(onA.Session.Queue) || len(s.Queue) != items {
			t.Fatalf("queue on B's sessions list: %d items, on A: %d", len(s.Queue), len(onA.Session.Queue))
		}
		if s.ContextUsage == nil || onA.Session.ContextUsage == nil || *s.ContextUsage != *onA.Session.ContextUsage {
			t.Fatalf("contextUsage on B: %+v, on A: %+v", s.ContextUsage, onA.Session.ContextUsage)
		}
	}
	if !found {
		t.Fatalf("session %s not in B's sessions list", sid)
	}
}
