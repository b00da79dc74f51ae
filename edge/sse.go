package edge

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/graph"
)

// resumableSSE is gqlgen's SSE transport with resumable session streams:
// every persisted event of sessionEvents goes out with `id: <seq>`, and a
// request with a Last-Event-ID header resumes after that seq, as afterSeq
// would (in place of the afterSeq argument). Live-only events carry no id,
// so a client's last event id stays the seq of the last persisted event it
// received.
type resumableSSE struct{ transport.SSE }

func (t resumableSSE) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	st := &sseState{}
	if v := r.Header.Values("Last-Event-ID"); len(v) > 0 {
		st.lastEventID, st.hasLastID = strings.TrimSpace(v[0]), true
	}
	ctx := graph.WithEventStream(r.Context(), st)
	t.SSE.Do(&sseIDWriter{ResponseWriter: w, st: st}, r.WithContext(ctx), exec)
}

// sseState links a sessionEvents stream to the SSE response that carries
// it: the stream records the seq of each event it hands to the executor
// (in order, before the hand-off), the writer takes one per event frame.
// Each event of the stream becomes exactly one "event: next" frame.
type sseState struct {
	lastEventID string
	hasLastID   bool

	mu   sync.Mutex
	seqs []int64
}

// Sent records the seq of the next event frame.
func (s *sseState) Sent(seq int64) {
	s.mu.Lock()
	s.seqs = append(s.seqs, seq)
	s.mu.Unlock()
}

func (s *sseState) pop() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seqs) == 0 {
		return 0
	}
	seq := s.seqs[0]
	s.seqs = s.seqs[1:]
	return seq
}

// ResumeAfter is the seq a sessionEvents subscription over SSE resumes
// after: the Last-Event-ID header when the request has one, else afterSeq.
func (s *sseState) ResumeAfter(afterSeq *int64) (*int64, error) {
	if !s.hasLastID {
		return afterSeq, nil
	}
	seq, err := strconv.ParseInt(s.lastEventID, 10, 64)
	if err != nil || seq < 0 {
		return nil, core.Errorf(core.CodeBadInput, "Last-Event-ID %q: expected the seq of the last event received (an integer 0 or more)", graph.ClipText(s.lastEventID, 40))
	}
	return &seq, nil
}

var sseNext = []byte("event: next\n")

// sseIDWriter adds `id: <seq>` to the frames of persisted events. gqlgen's
// SSE transport writes each frame with one Write call, under its lock.
type sseIDWriter struct {
	http.ResponseWriter
	st *sseState
}

func (w *sseIDWriter) Write(b []byte) (int, error) {
	if !bytes.HasPrefix(b, sseNext) {
		return w.ResponseWriter.Write(b)
	}
	seq := w.st.pop()
	if seq <= 0 {
		return w.ResponseWriter.Write(b)
	}
	frame := make([]byte, 0, len(b)+24)
	frame = append(frame, "id: "...)
	frame = strconv.AppendInt(frame, seq, 10)
	frame = append(frame, '\n')
	frame = append(frame, b...)
	if _, err := w.ResponseWriter.Write(frame); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (w *sseIDWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *sseIDWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
