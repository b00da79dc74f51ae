package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/storage/pgtest"
)

// The cluster benchmarks run two `foya serve` kernels on one fresh
// PostgreSQL database (docs/cluster.md):
//
//	go test -run '^$' -bench 'Cluster' -benchtime 500x .     # EventLatency
//	go test -run '^$' -bench 'ClusterDeltaReply' -benchtime 10x .

// latencySub is an SSE subscriber that records, per persisted event, the
// delay from the event's time (taken on the owner just before its append)
// to its arrival at this subscriber.
type latencySub struct {
	mu    sync.Mutex
	delay map[int64]time.Duration
	resp  *http.Response
}

func subscribeLatency(ctx context.Context, tb testing.TB, k *kernelProc, sid string) *latencySub {
	// Raw: the events are read off the SSE stream to time each one.
	body, _ := json.Marshal(map[string]any{
		"query":     `subscription($s: ID!) { sessionEvents(sessionId: $s) { seq type at } }`,
		"variables": map[string]any{"s": sid},
	})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, k.url()+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	s := &latencySub{delay: map[int64]time.Duration{}, resp: resp}
	tb.Cleanup(func() { resp.Body.Close() })
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			now := time.Now()
			data, ok := bytes.CutPrefix(line, []byte("data:"))
			if !ok {
				continue
			}
			var m struct {
				Data struct {
					SessionEvents struct {
						Seq *int64
						At  time.Time
					}
				}
			}
			if json.Unmarshal(bytes.TrimSpace(data), &m) != nil || m.Data.SessionEvents.Seq == nil {
				continue
			}
			s.mu.Lock()
			s.delay[*m.Data.SessionEvents.Seq] = now.Sub(m.Data.SessionEvents.At)
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *latencySub) has(seq int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.delay[seq]
	return ok
}

func (s *latencySub) delays() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]time.Duration, 0, len(s.delay))
	for _, d := range s.delay {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

// BenchmarkClusterEventLatency measures how long a persisted event takes
// from its append on the owner to a sessionEvents subscriber on another
// node (NOTIFY wake-up, then a read of the event store), next to a
// subscriber on the owner itself. One event per iteration (an
// updateSession on the owner, awaited by both subscribers).
func BenchmarkClusterEventLatency(b *testing.B) {
	url := pgtest.NewDatabase(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	owner, other := addNode(b, url), addNode(b, url)
	sid := owner.chatSession2(b)
	time.Sleep(1500 * time.Millisecond) // both nodes have seen each other's heartbeat
	remote := subscribeLatency(ctx, b, other.kernelProc, sid)
	local := subscribeLatency(ctx, b, owner.kernelProc, sid)
	seq := int64(1)
	step := func(i int) {
		owner.updateSession(b, sid, client.UpdateSessionInput{Title: ptr(fmt.Sprint("t", i))})
		seq++
		deadline := time.Now().Add(10 * time.Second)
		for !remote.has(seq) || !local.has(seq) {
			if time.Now().After(deadline) {
				b.Fatalf("event %d did not reach both subscribers", seq)
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	for i := range 20 { // warm up: connections, query caches
		step(-i)
	}
	remote.mu.Lock()
	clear(remote.delay)
	remote.mu.Unlock()
	local.mu.Lock()
	clear(local.delay)
	local.mu.Unlock()
	b.ResetTimer()
	for i := range b.N {
		step(i)
	}
	b.StopTimer()
	r, l := remote.delays(), local.delays()
	b.ReportMetric(ms(percentile(r, 0.5)), "remote-p50-ms")
	b.ReportMetric(ms(percentile(r, 0.99)), "remote-p99-ms")
	b.ReportMetric(ms(percentile(l, 0.5)), "owner-p50-ms")
	b.ReportMetric(ms(percentile(l, 0.99)), "owner-p99-ms")
}

// BenchmarkClusterDeltaReply measures a 2,000-delta reply delivered to a
// subscriber on a node that does not own the session (the deltas travel as
// coalesced NOTIFY payloads), with the sendMessage itself sent to that
// node (forwarded to the owner), next to a subscriber on the owner.
func BenchmarkClusterDeltaReply(b *testing.B) {
	url := pgtest.NewDatabase(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prov := newBenchProvider(b, benchChunks, 0, false)
	want := strings.Repeat("tok ", benchChunks)
	owner := addNode(b, url)
	sid := owner.chatSession(b, prov.baseURL())
	other := addNode(b, url, owner)
	time.Sleep(1500 * time.Millisecond)
	remote, err := dialSSE(ctx, other.addr, benchSubscription, map[string]any{"s": sid})
	if err != nil {
		b.Fatal(err)
	}
	defer remote.close()
	local, err := dialSSE(ctx, owner.addr, benchSubscription, map[string]any{"s": sid})
	if err != nil {
		b.Fatal(err)
	}
	defer local.close()
	// Both subscribers read the same turn: the local one in the background.
	run := func() (timing, timing, error) {
		lc := make(chan error, 1)
		var lt timing
		start := time.Now()
		go func() {
			t, err := readReply(ctx, local, want, start)
			lt = t
			lc <- err
		}()
		other.sendMessage(b, sid, "go")
		rt, err := readReply(ctx, remote, want, start)
		if lerr := <-lc; err == nil {
			err = lerr
		}
		return rt, lt, err
	}
	if _, _, err := run(); err != nil {
		b.Fatal(err)
	}
	var rs, ls []timing
	b.ResetTimer()
	for range b.N {
		rt, lt, err := run()
		if err != nil {
			b.Fatal(err)
		}
		rs, ls = append(rs, rt), append(ls, lt)
	}
	b.StopTimer()
	pick := func(ts []timing, f func(timing) time.Duration) time.Duration { return median(mapTimings(ts, f)) }
	whole := func(t timing) time.Duration { return t.whole }
	first := func(t timing) time.Duration { return t.first }
	b.ReportMetric(ms(pick(rs, whole)), "remote-whole-ms")
	b.ReportMetric(ms(pick(rs, first)), "remote-first-ms")
	b.ReportMetric(ms(pick(ls, whole)), "owner-whole-ms")
	b.ReportMetric(ms(pick(ls, first)), "owner-first-ms")
}

// readReply reads one turn from sub: time to the first delta and to the
// whole text, which must arrive complete.
func readReply(ctx context.Context, sub eventSource, want string, start time.Time) (timing, error) {
	var t timing
	var text strings.Builder
	for {
		ev, err := sub.next(ctx)
		if err != nil {
			return t, err
		}
		switch ev.Type {
		case "message_delta":
			if ev.Delta == nil {
				continue
			}
			if text.Len() == 0 {
				t.first = time.Since(start)
			}
			text.WriteString(*ev.Delta)
			if text.Len() == len(want) {
				t.whole = time.Since(start)
			}
		case "turn_finished":
			if text.String() != want {
				return t, fmt.Errorf("deltas lost: %d of %d bytes arrived", text.Len(), len(want))
			}
			return t, nil
		}
	}
}
