package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/edge/access"
)

// ForwardedHeader marks a request one node forwarded to a session's owner
// (its value: the owner's node id as the sender saw it); the receiver runs
// it, refuses it, or, when the session changed owner on the way, passes it
// on to the new owner once (passedOnHeader).
const ForwardedHeader = "X-Foya-Forwarded"

// passedOnHeader marks a forwarded request that a node passed on to the
// session's new owner (see forwarder.around); it is not passed on again.
const passedOnHeader = "X-Foya-Passed-On"

// forwardWait bounds how long a command waits for the lease of an owner
// that cannot be reached to expire before it is taken over here.
const forwardWait = 15 * time.Second

// sessionArgs names, per root field, the argument that holds the session
// the operation is about ("input.sessionId": a field of the input object).
var sessionArgs = map[string]string{
	// mutations
	"updateSession": "id", "deleteSession": "id", "forkSession": "sessionId",
	"compactSession": "sessionId", "previewRewind": "sessionId", "confirmRewind": "sessionId",
	"sendMessage": "sessionId", "confirmPlan": "sessionId", "editQueuedMessage": "sessionId",
	"moveQueuedMessage": "sessionId", "deleteQueuedMessage": "sessionId", "stopTurn": "sessionId",
	"resolveApproval": "sessionId", "answerQuestion": "sessionId",
	"generateImage": "input.sessionId", "generateVideo": "input.sessionId",
	"attachSessionMcpServer": "sessionId", "detachSessionMcpServer": "sessionId",
	"killTerminal": "sessionId", "writeTerminal": "sessionId",
	// queries whose answer holds the owner's memory (queue, context usage,
	// terminals)
	"session": "id", "terminalOutput": "sessionId",
}

// forwarder sends an operation about a session another node owns to that
// node and answers with its response verbatim (the client never notices).
type forwarder struct {
	svc    *session.Service
	auth   *Auth
	signer *requestSigner // signs every request to another node (nil: no cluster key)
	client *http.Client
	log    *slog.Logger
}

func newForwarder(svc *session.Service, auth *Auth, signer *requestSigner, log *slog.Logger) *forwarder {
	return &forwarder{svc: svc, auth: auth, signer: signer, log: log, client: &http.Client{
		Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second,
			DialContext: (&net.Dialer{Timeout: 3 * time.Second}).DialContext},
	}}
}

// sessionsOf returns the sessions the operation's root fields name.
func sessionsOf(oc *graphql.OperationContext) []string {
	var ids []string
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				arg, ok := sessionArgs[s.Name]
				if !ok {
					continue
				}
				name, field, nested := strings.Cut(arg, ".")
				a := s.Arguments.ForName(name)
				if a == nil || a.Value == nil {
					continue
				}
				v, err := a.Value.Value(oc.Variables)
				if err != nil {
					continue
				}
				if nested {
					m, _ := v.(map[string]any)
					v = m[field]
				}
				if id, ok := v.(string); ok && id != "" {
					ids = append(ids, id)
				}
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				if s.Definition != nil {
					walk(s.Definition.SelectionSet)
				}
			}
		}
	}
	walk(oc.Operation.SelectionSet)
	return ids
}

// around is the AroundOperations middleware.
func (f *forwarder) around(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc == nil || oc.Operation == nil || oc.Operation.Operation == ast.Subscription || !f.svc.Clustered() {
		return next(ctx)
	}
	// Sessions in the answer that another node owns get their queue and
	// context usage from it.
	ctx = f.withRemoteState(ctx, oc.Headers)
	ids := sessionsOf(oc)
	if len(ids) == 0 {
		return next(ctx)
	}
	mutation := oc.Operation.Operation == ast.Mutation
	forwarded := oc.Headers.Get(ForwardedHeader) != ""
	deadline := time.Now().Add(forwardWait)
	for {
		owner, err := f.owner(ctx, ids, mutation)
		if err != nil {
			return errorResponse(err)
		}
		if owner.Local {
			return next(ctx)
		}
		if forwarded {
			// The sender's lease view names a node this request did not
			// reach: the lease holder is an earlier process at this URL
			// (killed and restarted) whose lease has not expired yet (wait
			// for it below), or the owner changed while the request
			// travelled, e.g. the sender itself took the session over from
			// a dead node (pass the request on to the owner, once).
			forwardedTo := oc.Headers.Get(ForwardedHeader)
			if forwardedTo != owner.NodeID && oc.Headers.Get(passedOnHeader) == "" {
				// Passed on at most once along the way (passedOnHeader): two
				// nodes whose views of the lease disagree for a moment cannot
				// send a request back and forth. Whatever the answer, the
				// check below ends this loop.
				h := oc.Headers.Clone()
				h.Set(passedOnHeader, "1")
				resp, err := f.forward(ctx, oc, owner, h)
				if err == nil {
					return oneResponse(resp)
				}
				f.log.Warn("pass a forwarded request on to the session's owner", "node", owner.NodeID, "url", owner.URL, "err", err)
			}
			if forwardedTo != owner.NodeID || !mutation || time.Now().After(deadline) {
				return errorResponse(core.Errorf(core.CodeUnavailable, "session %s is run by node %s; retry", ids[0], owner.NodeID))
			}
		} else {
			resp, err := f.forward(ctx, oc, owner, oc.Headers)
			if err == nil {
				return oneResponse(resp)
			}
			var dial *net.OpError
			if !errors.As(err, &dial) || dial.Op != "dial" || time.Now().After(deadline) {
				f.log.Warn("forward to the session's owner", "node", owner.NodeID, "url", owner.URL, "err", err)
				return errorResponse(&core.Error{Code: core.CodeUnavailable, Message: fmt.Sprintf("the node that runs this session (%s) did not answer; retry", owner.NodeID), Err: err})
			}
		}
		// The owner is gone (nothing was sent to it): wait for its lease
		// to expire, then the session is taken over here.
		select {
		case <-ctx.Done():
			return errorResponse(ctx.Err())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// owner returns the node that must run the operation: the first remote
// owner among its sessions, or this node.
func (f *forwarder) owner(ctx context.Context, ids []string, mutation bool) (core.Owner, error) {
	for _, id := range ids {
		var o core.Owner
		var err error
		if mutation {
			o, err = f.svc.AcquireSession(ctx, id)
		} else {
			o, err = f.svc.LookupSession(ctx, id)
		}
		if err != nil || !o.Local {
			return o, err
		}
	}
	return core.Owner{Local: true}, nil
}

func (f *forwarder) forward(ctx context.Context, oc *graphql.OperationContext, owner core.Owner, headers http.Header) (*graphql.Response, error) {
	body, err := json.Marshal(map[string]any{"query": oc.RawQuery, "variables": oc.Variables, "operationName": oc.OperationName})
	if err != nil {
		return nil, fmt.Errorf("encode the forwarded request: %w", err)
	}
	status, raw, err := f.post(ctx, owner.URL, "/graphql", owner.NodeID, headers, body)
	if err != nil {
		return nil, err
	}
	var out graphql.Response
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("owner answered HTTP %d: %s", status, clip(raw, 200))
	}
	return &out, nil
}

// post sends a JSON body to path on another node, marked as forwarded by
// nodeID, signed with the cluster's key (SignatureHeader) and authorised
// with the client's own Authorization header or, when it sent none, this
// node's token. It returns the status and the body (at
// most 256 MiB).
func (f *forwarder) post(ctx context.Context, url, path, nodeID string, from http.Header, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(url, "/")+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(ForwardedHeader, nodeID)
	if from.Get(passedOnHeader) != "" {
		req.Header.Set(passedOnHeader, "1")
	}
	if h := from.Get("Authorization"); h != "" {
		req.Header.Set("Authorization", h)
	} else if f.auth != nil {
		if tok, err := access.ReadToken(f.auth.Path()); err == nil {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	if f.signer != nil {
		f.signer.sign(req, body)
	}
	res, err := f.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 256<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("read the owner's answer: %w", err)
	}
	return res.StatusCode, raw, nil
}

func clip(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

func oneResponse(r *graphql.Response) graphql.ResponseHandler {
	done := false
	return func(context.Context) *graphql.Response {
		if done {
			return nil
		}
		done = true
		return r
	}
}

func errorResponse(err error) graphql.ResponseHandler {
	ge := &gqlerror.Error{Message: err.Error(), Extensions: map[string]any{"code": string(core.CodeInternal)}}
	var ce *core.Error
	if errors.As(err, &ce) {
		ge.Message, ge.Extensions["code"] = ce.Message, string(ce.Code)
	}
	return oneResponse(&graphql.Response{Errors: gqlerror.List{ge}})
}
