package mcphost

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foya-dev/foya/core"
)

// URL elicitation required (MCP 2025-11-25): a server that cannot go on
// until the person completes something in a browser (connects an account,
// pays, signs a consent) answers a call with error -32042 naming the pages
// (URL-mode elicitations). The kernel shows each page as a question on the
// calling session, waits until the server says it was completed
// (notifications/elicitation/complete) and makes the call again.

// maxURLRounds bounds how many times one call is made again after the
// person completed the pages the server asked for.
const maxURLRounds = 3

// completions are the URL elicitations a call waits for, by elicitation id.
type completions struct {
	mu      sync.Mutex
	waiting map[string]chan struct{}
}

// wait registers ids; done reports each one's completion.
func (c *completions) wait(ids []string) (done []chan struct{}, forget func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting == nil {
		c.waiting = map[string]chan struct{}{}
	}
	for _, id := range ids {
		ch := make(chan struct{})
		c.waiting[id] = ch
		done = append(done, ch)
	}
	return done, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, id := range ids {
			if c.waiting[id] == done[i] {
				delete(c.waiting, id)
			}
		}
	}
}

// complete is the server's notifications/elicitation/complete.
func (c *completions) complete(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.waiting[id]
	if ok {
		close(ch)
		delete(c.waiting, id)
	}
	return ok
}

func (s *server) elicitationComplete(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
	if req == nil || req.Params == nil {
		return
	}
	s.log.Info("mcp elicitation completed", "elicitation_id", req.Params.ElicitationID, "awaited", s.urls.complete(req.Params.ElicitationID))
}

// urlElicitations reads the pages of a -32042 error; ok is false for any
// other error.
func urlElicitations(err error) (els []*mcp.ElicitParams, ok bool) {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeURLElicitationRequired {
		return nil, false
	}
	var data struct {
		Elicitations []*mcp.ElicitParams `json:"elicitations"`
	}
	if json.Unmarshal(rpcErr.Data, &data) != nil || len(data.Elicitations) == 0 || len(data.Elicitations) > 8 {
		return nil, false
	}
	for _, e := range data.Elicitations {
		if e == nil || e.Mode != "url" || e.ElicitationID == "" {
			return nil, false
		}
	}
	return data.Elicitations, true
}

// callTool makes the call, and again after the person completed the pages
// a server answered -32042 for. A result other than nil is the tool's
// answer when the pages were not completed.
func (s *server) callTool(ctx context.Context, cs *mcp.ClientSession, call *inflight, p *mcp.CallToolParams) (*mcp.CallToolResult, *core.ToolResult, error) {
	for round := 0; ; round++ {
		res, err := cs.CallTool(context.WithValue(ctx, inflightKey{}, call), p)
		els, ok := urlElicitations(err)
		if !ok {
			return res, nil, err
		}
		if round == maxURLRounds {
			tr := toolError("MCP server %q still asks for a page to be completed after %d rounds; giving up", s.cfg.Name, maxURLRounds)
			return nil, &tr, nil
		}
		if tr, done := s.completeURLs(call, els); done {
			if err := call.ctx.Err(); err != nil {
				return nil, nil, err // the turn stopped
			}
			return nil, &tr, nil
		}
	}
}

// completeURLs asks the person to complete each page and waits for the
// server's word that they were; done is true (with the tool's answer) when
// one was refused, nobody could be asked, or the wait ended first.
func (s *server) completeURLs(call *inflight, els []*mcp.ElicitParams) (core.ToolResult, bool) {
	ids := make([]string, len(els))
	for i, e := range els {
		ids[i] = e.ElicitationID
	}
	done, forget := s.urls.wait(ids) // before asking: the notice may come at once
	defer forget()
	if call.asker == nil {
		return toolError("MCP server %q needs a page completed in a browser, and this call has nobody to ask", s.cfg.Name), true
	}
	call.timer.pause()
	defer call.timer.resume()
	ctx, cancel := context.WithTimeout(call.ctx, s.m.cfg.ElicitationTimeout)
	defer cancel()
	for _, e := range els {
		q, err := elicitationOf(s.cfg.Name, e)
		if err != nil {
			return toolError("MCP server %q asked for a page that cannot be shown: %s", s.cfg.Name, err), true
		}
		res, err := call.asker.Elicit(ctx, q)
		if err != nil {
			return toolError("MCP server %q needs %s completed; asking failed: %s", s.cfg.Name, e.URL, err), true
		}
		if res.Action != core.ElicitAccept {
			return toolError("MCP server %q needs %s completed in a browser (%s); the user answered %s", s.cfg.Name, e.URL, e.Message, res.Action), true
		}
	}
	for i, ch := range done {
		select {
		case <-ch:
		case <-ctx.Done():
			if call.ctx.Err() != nil {
				return toolError("the turn stopped while waiting for %s to be completed", els[i].URL), true
			}
			return toolError("MCP server %q did not say %s was completed within %s", s.cfg.Name, els[i].URL, s.m.cfg.ElicitationTimeout), true
		}
	}
	s.log.Info("mcp url elicitations completed; calling again", "count", len(els))
	return core.ToolResult{}, false
}
