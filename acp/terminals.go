package acp

import (
	"fmt"
	"strings"
	"sync"

	"github.com/foya-dev/foya/client"
)

// Background terminals (docs/terminals.md) as ACP tool calls: each kernel
// terminal is a tool call of kind execute (id "terminal:<id>") that opens
// when it starts, carries the last part of its output as content while it
// runs (live terminal_output events) and completes or fails when it ends.
// The terminals run in the kernel. A client that offers terminal/* gets
// each one mirrored in a client terminal instead (client_terminals.go).

// terminalTail is how much of a terminal's output its tool call shows.
const terminalTail = 8 << 10

// terminalViews are the terminals a session's client was told about.
type terminalViews struct {
	mu    sync.Mutex
	tails map[string]string // by terminal id
	// mirrors are the client terminals mirroring kernel terminals, by
	// kernel terminal id (client_terminals.go).
	mirrors map[string]string
}

// mirror records the client terminal that mirrors kernel terminal id.
func (v *terminalViews) mirror(id, clientID string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mirrors == nil {
		v.mirrors = map[string]string{}
	}
	v.mirrors[id] = clientID
}

// mirrored is the client terminal mirroring kernel terminal id ("": none).
func (v *terminalViews) mirrored(id string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.mirrors[id]
}

// unmirrorOne forgets kernel terminal id's mirror and returns its client
// terminal ("": none).
func (v *terminalViews) unmirrorOne(id string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	c := v.mirrors[id]
	delete(v.mirrors, id)
	return c
}

// unmirror forgets every mirror and returns the client terminals' ids.
func (v *terminalViews) unmirror() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	ids := make([]string, 0, len(v.mirrors))
	for _, c := range v.mirrors {
		ids = append(ids, c)
	}
	v.mirrors = nil
	return ids
}

func terminalCallID(id string) string { return "terminal:" + id }

// add appends output to a terminal's tail and returns the tail.
func (v *terminalViews) add(id, text string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.tails == nil {
		v.tails = map[string]string{}
	}
	t := v.tails[id] + text
	if len(t) > terminalTail {
		t = t[len(t)-terminalTail:]
		// Start on a whole line (or a whole character) of the tail.
		if i := strings.IndexByte(t, '\n'); i >= 0 && i < 512 {
			t = t[i+1:]
		}
		t = strings.ToValidUTF8(t, "")
	}
	v.tails[id] = t
	return t
}

// end forgets a terminal and returns its last tail.
func (v *terminalViews) end(id string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	t := v.tails[id]
	delete(v.tails, id)
	return t
}

// terminalEvent maps terminal_started, terminal_output and terminal_exited.
func (s *session) terminalEvent(ev gqlEvent) {
	switch {
	case ev.Type == "terminal_started" && ev.Terminal != nil:
		tm := ev.Terminal
		s.update(toolCall{SessionUpdate: "tool_call", ToolCallID: terminalCallID(tm.Id), Title: "terminal: " + tm.Command,
			Kind: "execute", Status: "in_progress", Locations: []toolCallLocation{{Path: tm.Cwd}}})
		if cid := s.createClientTerminal(tm.Id, tm.Cwd); cid != "" {
			s.terms.mirror(tm.Id, cid)
			s.update(toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: terminalCallID(tm.Id), Status: "in_progress",
				Content: []toolCallContent{terminalContent{Type: "terminal", TerminalID: cid}}})
		}
	case ev.Type == "terminal_output" && ev.TerminalOutput != nil:
		o := ev.TerminalOutput
		if s.terms.mirrored(o.TerminalId) != "" {
			return // the client terminal shows it
		}
		tail := s.terms.add(o.TerminalId, o.Text)
		s.update(toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: terminalCallID(o.TerminalId), Status: "in_progress",
			Content: []toolCallContent{wrappedContent{Type: "content", Content: textBlock(tail)}}})
	case ev.Type == "terminal_exited" && ev.Terminal != nil:
		s.terminalExited(*ev.Terminal)
	}
}

// terminalExited completes or fails a terminal's tool call: with its
// client terminal once the follower there has printed everything, else
// with the last part of its output as text.
func (s *session) terminalExited(tm client.TerminalFields) {
	tail := s.terms.end(tm.Id)
	status, how := "completed", terminalEnd(tm)
	if tm.Status != client.TerminalStatusExited || tm.ExitCode == nil || *tm.ExitCode != 0 {
		status = "failed"
	}
	final := toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: terminalCallID(tm.Id), Status: status,
		RawOutput: &rawOutput{IsError: status == "failed", Output: how}}
	if cid := s.terms.unmirrorOne(tm.Id); cid != "" {
		final.Content = []toolCallContent{terminalContent{Type: "terminal", TerminalID: cid},
			wrappedContent{Type: "content", Content: textBlock(how)}}
		go s.endClientTerminal(cid, func() {
			if s.ctx.Err() == nil {
				s.update(final)
			}
		})
		return
	}
	if last := s.lastOutput(tm); last != "" {
		tail = last // whole, even when live output was missed
	}
	text := how
	if tail != "" {
		text = tail + "\n" + how
	}
	final.Content = []toolCallContent{wrappedContent{Type: "content", Content: textBlock(text)}}
	s.update(final)
}

// terminalEnd says how a terminal ended.
func terminalEnd(tm client.TerminalFields) string {
	switch {
	case tm.Status == client.TerminalStatusKilled:
		return fmt.Sprintf("[terminal killed; %d bytes of output]", tm.OutputBytes)
	case tm.ExitCode != nil && *tm.ExitCode >= 0:
		return fmt.Sprintf("[terminal exited with code %d; %d bytes of output]", *tm.ExitCode, tm.OutputBytes)
	default:
		return fmt.Sprintf("[terminal ended by a signal; %d bytes of output]", tm.OutputBytes)
	}
}

// lastOutput reads the last part of an ended terminal's output from the
// kernel ("" when it cannot: the live tail stands).
func (s *session) lastOutput(tm client.TerminalFields) string {
	after := max(0, tm.OutputBytes-terminalTail)
	r, err := client.TerminalOutput(s.ctx, s.a.k, s.id, tm.Id, &after)
	if err != nil {
		s.a.log.Debug("acp: read a terminal's output", "session_id", s.id, "terminal_id", tm.Id, "err", err)
		return ""
	}
	return r.TerminalOutput.Text
}
