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
// The terminals run in the kernel; they are not mapped to the client's
// terminal/* methods (which would run the command on the client).

// terminalTail is how much of a terminal's output its tool call shows.
const terminalTail = 8 << 10

// terminalViews are the terminals a session's client was told about.
type terminalViews struct {
	mu    sync.Mutex
	tails map[string]string // by terminal id
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
	case ev.Type == "terminal_output" && ev.TerminalOutput != nil:
		o := ev.TerminalOutput
		tail := s.terms.add(o.TerminalId, o.Text)
		s.update(toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: terminalCallID(o.TerminalId), Status: "in_progress",
			Content: []toolCallContent{wrappedContent{Type: "content", Content: textBlock(tail)}}})
	case ev.Type == "terminal_exited" && ev.Terminal != nil:
		tm := ev.Terminal
		tail := s.terms.end(tm.Id)
		if last := s.lastOutput(*tm); last != "" {
			tail = last // whole, even when live output was missed
		}
		status, how := "completed", terminalEnd(*tm)
		if tm.Status != client.TerminalStatusExited || tm.ExitCode == nil || *tm.ExitCode != 0 {
			status = "failed"
		}
		text := how
		if tail != "" {
			text = tail + "\n" + how
		}
		s.update(toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: terminalCallID(tm.Id), Status: status,
			Content:   []toolCallContent{wrappedContent{Type: "content", Content: textBlock(text)}},
			RawOutput: &rawOutput{IsError: status == "failed", Output: how}})
	}
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
