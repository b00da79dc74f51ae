package graph_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
	"github.com/foya-dev/foya/edge"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// BenchmarkDeltasToWebSocket measures text deltas flowing from an
// OpenAI-compatible HTTP stream, through the provider plugin boundary
// (in-process gRPC), the turn engine and the broker, to a graphql-ws
// subscriber, and the latency from sendMessage to the first delta. Deltas
// coalesce when the subscriber is behind, so it counts text, not events.
// (BenchmarkDeltaPath in the repository root measures the same through the
// real binary and its plugin processes.)
func BenchmarkDeltasToWebSocket(b *testing.B) {
	const parts = 2000
	k := newTestKernel(b)
	sid := k.chatSession(b, nil, "BYPASS")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ws := dialWS(b, ctx, k.srv.URL)
	defer ws.conn.Close(websocket.StatusNormalClosure, "")
	ws.subscribe(ctx, "1", `subscription($id: ID!) { sessionEvents(sessionId: $id) { seq type delta } }`, map[string]any{"id": sid})
	time.Sleep(50 * time.Millisecond)
	words := make([]string, parts)
	for i := range words {
		words[i] = "tok "
	}
	var firstDelta time.Duration
	b.ResetTimer()
	for range b.N {
		k.fake.Enqueue(openaitest.TextStream(testModel, words...))
		start := time.Now()
		k.send(b, sid, "go")
		text, first := 0, true
		for {
			ev := ws.nextEvent(ctx)
			if ev.Type == "message_delta" && ev.Delta != nil {
				if first {
					firstDelta += time.Since(start)
					first = false
				}
				text += len(*ev.Delta)
			}
			if ev.Type == "turn_finished" {
				break
			}
		}
		if text != parts*len("tok ") {
			b.Fatalf("%d of %d bytes of text arrived", text, parts*len("tok "))
		}
	}
	b.ReportMetric(float64(b.N*parts)/b.Elapsed().Seconds(), "deltas/s")
	b.ReportMetric(float64(firstDelta.Microseconds())/float64(b.N)/1000, "ms-to-first-delta")
}

// BenchmarkHundredSessions streams 100 turns at once (each 50 deltas) and
// counts the terminal events the subscribers receive: none may be lost.
func BenchmarkHundredSessions(b *testing.B) {
	const sessions, parts = 100, 50
	// 100 concurrent sends from one peer: over the default of 16 in flight.
	k := newTestKernel(b, func(c *edge.Config) { c.Limits.MaxInFlightPerPeer = sessions })
	conn := k.createConn(b, map[string]any{"name": "fake", "baseUrl": k.fake.BaseURL(), "models": []any{map[string]any{"id": testModel}}})
	ids := make([]string, sessions)
	for i := range ids {
		var s struct{ CreateSession struct{ ID string } }
		k.mustDo(b, `mutation($c: ID) { createSession(input: {connectionId: $c, title: "x", approvalMode: BYPASS}) { id } }`, map[string]any{"c": conn.ID}, &s)
		ids[i] = s.CreateSession.ID
	}
	words := make([]string, parts)
	for i := range words {
		words[i] = fmt.Sprint("w", i, " ")
	}
	lost := 0
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var wg sync.WaitGroup
		var mu sync.Mutex
		finished := 0
		for _, sid := range ids {
			ch, err := k.svc.Subscribe(ctx, sid, nil)
			if err != nil {
				b.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ev := range ch {
					if ev.Type == core.EventTurnFinished {
						mu.Lock()
						finished++
						mu.Unlock()
						return
					}
				}
			}()
		}
		for range ids {
			k.fake.Enqueue(openaitest.TextStream(testModel, words...))
		}
		var sends sync.WaitGroup
		for _, sid := range ids {
			sends.Add(1)
			go func() {
				defer sends.Done()
				k.send(b, sid, "go")
			}()
		}
		sends.Wait()
		wg.Wait()
		cancel()
		lost += sessions - finished
	}
	b.ReportMetric(float64(b.N*sessions)/b.Elapsed().Seconds(), "turns/s")
	b.ReportMetric(float64(lost), "terminal-events-lost")
}

// BenchmarkExportImport measures exportSession and importSession of a
// 5,001-event session (user messages of about 200 bytes) on SQLite, through
// the engine (no HTTP): the document's size, and the time of one export and
// of one import (parse, validate, one transaction with projections).
func BenchmarkExportImport(b *testing.B) {
	const n = 5000
	k := newTestKernel(b)
	s, err := k.svc.CreateSession(context.Background(), core.CreateSessionInput{})
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("lorem ipsum ", 16)
	for i := 0; i < n; i += 500 {
		batch := make([]core.Event, 500)
		for j := range batch {
			batch[j] = coretest.MessageEvent(b, s.ID, core.RoleUser, fmt.Sprintf("%d %s", i+j, text))
		}
		if _, err := k.svc.Append(context.Background(), s.ID, batch...); err != nil {
			b.Fatal(err)
		}
	}
	var exportT, importT time.Duration
	var size int
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		doc, err := k.engine.Archive().Export(context.Background(), s.ID, 64<<20)
		if err != nil {
			b.Fatal(err)
		}
		exportT += time.Since(start)
		size = len(doc)
		start = time.Now()
		imp, err := k.engine.Archive().Import(context.Background(), bytes.NewReader(doc), "")
		if err != nil {
			b.Fatal(err)
		}
		importT += time.Since(start)
		if imp.HeadSeq != n+1 {
			b.Fatalf("imported head %d", imp.HeadSeq)
		}
	}
	b.ReportMetric(float64(exportT.Milliseconds())/float64(b.N), "export-ms")
	b.ReportMetric(float64(importT.Milliseconds())/float64(b.N), "import-ms")
	b.ReportMetric(float64(size)/(1<<20), "doc-MiB")
}

// BenchmarkUploadAttachment uploads a 16 MiB file through uploadAttachment
// (a GraphQL multipart request to the in-process kernel): the heap it
// allocates per upload (B/op) is the request's parsing, the artifact
// store's copy and the description of the stored file.
func BenchmarkUploadAttachment(b *testing.B) {
	k := newTestKernel(b)
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<20) // 16 MiB, text
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("operations", `{"query":"mutation($f: Upload!) { uploadAttachment(file: $f) { id } }","variables":{"f":null}}`)
	mw.WriteField("map", `{"0": ["variables.f"]}`)
	fw, _ := mw.CreateFormFile("0", "big.txt")
	fw.Write(data)
	mw.Close()
	raw, ct := body.Bytes(), mw.FormDataContentType()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.Post(k.srv.URL+"/graphql", ct, bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(out, []byte(`"id":"att_`)) {
			b.Fatalf("upload: %s", out)
		}
	}
}
