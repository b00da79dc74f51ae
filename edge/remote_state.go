package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/graph"
)

// StatePath is where a node answers other nodes with the in-memory state
// (queue, context usage) of the sessions it owns.
const StatePath = "/cluster/state"

// remoteBatchWindow is how long the first request of an operation for a
// remote session's state waits for the others, so they go in one request
// per owner.
const remoteBatchWindow = 3 * time.Millisecond

// stateHandler answers StatePath: POST {"ids":[…]} → {"id": graph.SessionState}.
func stateHandler(engine *engine.Engine) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A custom header and a JSON body: a browser cannot send this
		// without a preflight, which is never granted.
		if r.Method != http.MethodPost || r.Header.Get(ForwardedHeader) == "" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var req struct {
			IDs []string `json:"ids"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		out := make(map[string]graph.SessionState, len(req.IDs))
		for _, id := range req.IDs {
			st := graph.SessionState{Queue: engine.Queues().List(id)}
			if u, err := engine.ContextUsage(r.Context(), id); err != nil {
				st.Error, st.Code = err.Error(), string(core.CodeInternal)
				var ce *core.Error
				if errors.As(err, &ce) {
					st.Error, st.Code = ce.Message, string(ce.Code)
				}
			} else {
				st.ContextUsage = &u
			}
			out[id] = st
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
}

// remoteState loads, for one operation, the state of the sessions other
// nodes own: ids asked for together are looked up in one database round
// trip and fetched with one request per owner.
type remoteState struct {
	f  *forwarder
	oc http.Header

	mu      sync.Mutex
	pending []string
	waiters map[string]chan struct{}
	results map[string]*remoteResult
}

type remoteResult struct {
	remote bool
	st     graph.SessionState
	err    error
}

func (f *forwarder) withRemoteState(ctx context.Context, h http.Header) context.Context {
	return graph.WithRemoteStates(ctx, &remoteState{f: f, oc: h, waiters: map[string]chan struct{}{}, results: map[string]*remoteResult{}})
}

// SessionState returns the state of a session another node owns, batched
// with the other sessions the operation asks about; ok is false when this
// node answers for it.
func (rs *remoteState) SessionState(ctx context.Context, id string) (st graph.SessionState, ok bool, err error) {
	rs.mu.Lock()
	if r, done := rs.results[id]; done {
		rs.mu.Unlock()
		return r.st, r.remote, r.err
	}
	ch, waiting := rs.waiters[id]
	if !waiting {
		ch = make(chan struct{})
		rs.waiters[id] = ch
		rs.pending = append(rs.pending, id)
		if len(rs.pending) == 1 {
			time.AfterFunc(remoteBatchWindow, func() { rs.load(context.WithoutCancel(ctx)) })
		}
	}
	rs.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return graph.SessionState{}, false, ctx.Err()
	}
	rs.mu.Lock()
	r := rs.results[id]
	rs.mu.Unlock()
	return r.st, r.remote, r.err
}

func (rs *remoteState) load(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rs.mu.Lock()
	ids := rs.pending
	rs.pending = nil
	rs.mu.Unlock()
	results := make(map[string]*remoteResult, len(ids))
	owners, err := rs.f.svc.LookupSessions(ctx, ids)
	if err != nil {
		rs.f.log.Warn("look sessions' owners up; answering queue and context usage here", "err", err)
	}
	byURL := map[string][]string{}
	nodeOf := map[string]string{}
	for _, id := range ids {
		if err != nil {
			// Answered here (as when no node owns the session).
			results[id] = &remoteResult{}
			continue
		}
		o, remote := owners[id]
		if !remote {
			results[id] = &remoteResult{}
			continue
		}
		byURL[o.URL] = append(byURL[o.URL], id)
		nodeOf[o.URL] = o.NodeID
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for url, group := range byURL {
		wg.Add(1)
		go func() {
			defer wg.Done()
			states, err := rs.fetch(ctx, url, nodeOf[url], group)
			if err != nil {
				rs.f.log.Warn("read sessions' queue and context usage from their owner; answering here", "node", nodeOf[url], "url", url, "sessions", len(group), "err", err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range group {
				st, found := states[id]
				switch {
				case err != nil || !found:
					// An owner that does not answer is dying: what it held
					// in memory goes with it, as at a take-over.
					results[id] = &remoteResult{}
				default:
					results[id] = &remoteResult{remote: true, st: st}
				}
			}
		}()
	}
	wg.Wait()
	rs.mu.Lock()
	for id, r := range results {
		rs.results[id] = r
		close(rs.waiters[id])
		delete(rs.waiters, id)
	}
	rs.mu.Unlock()
}

func (rs *remoteState) fetch(ctx context.Context, url, nodeID string, ids []string) (map[string]graph.SessionState, error) {
	body, err := json.Marshal(map[string]any{"ids": ids})
	if err != nil {
		return nil, err
	}
	status, raw, err := rs.f.post(ctx, url, StatePath, nodeID, rs.oc, body)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("owner answered HTTP %d: %s", status, clip(raw, 200))
	}
	var out map[string]graph.SessionState
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decode the owner's answer: %w", err)
	}
	return out, nil
}
