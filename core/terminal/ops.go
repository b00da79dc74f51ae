package terminal

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/foya-dev/foya/core"
)

// term is one terminal; mu guards info, ring, changed and the marks.
type term struct {
	mu      sync.Mutex
	info    core.Terminal
	ring    *ring
	changed chan struct{} // closed and replaced when output comes or it ends
	proc    core.TerminalProcess
	// killed says a kill was asked for (the status becomes KILLED);
	// forgotten says its session is gone (no events, no artifact).
	killed, forgotten bool
	done              chan struct{}
	inMu              sync.Mutex // serializes writes to the input
}

func (t *term) isRunning() bool {
	select {
	case <-t.done:
		return false
	default:
		return true
	}
}

// broadcast wakes the readers waiting for output; t.mu is held.
func (t *term) broadcast() {
	close(t.changed)
	t.changed = make(chan struct{})
}

func (t *term) snapshot() core.Terminal {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.info
}

// find returns a terminal of a session.
func (s *Service) find(sessionID, id string) (*term, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.bySession[sessionID] {
		if t.info.ID == id {
			return t, nil
		}
	}
	return nil, core.Errorf(core.CodeNotFound, "terminal %s not found in session %s (terminal_list or Session.terminals lists them)", id, sessionID)
}

// Read returns output after afterOffset, waiting up to wait (at most
// MaxWait) for some when there is none yet and the terminal runs.
func (s *Service) Read(ctx context.Context, sessionID, id string, afterOffset int64, limit int, wait time.Duration) (core.TerminalOutput, error) {
	t, err := s.find(sessionID, id)
	if err != nil {
		return core.TerminalOutput{}, err
	}
	if afterOffset < 0 {
		return core.TerminalOutput{}, core.Errorf(core.CodeBadInput, "afterOffset %d: must not be negative", afterOffset)
	}
	if limit <= 0 {
		limit = DefaultReadBytes
	}
	limit = min(limit, MaxReadBytes)
	wait = min(max(wait, 0), MaxWait)
	expired := wait == 0
	var timer <-chan time.Time
	for {
		t.mu.Lock()
		if afterOffset > t.ring.total {
			total := t.ring.total
			t.mu.Unlock()
			return core.TerminalOutput{}, core.Errorf(core.CodeBadInput, "afterOffset %d is past the end of the output (%d bytes so far)", afterOffset, total)
		}
		running := t.info.Status == core.TerminalRunning
		text, from, next := t.ring.read(afterOffset, limit, !running)
		// Nothing new (or only part of a rune) while it runs: wait.
		if next > afterOffset || from > afterOffset || !running || expired {
			out := core.TerminalOutput{Text: text, Offset: from, NextOffset: next, Dropped: from - afterOffset,
				More: next < t.ring.total, Terminal: t.info}
			t.mu.Unlock()
			return out, nil
		}
		changed := t.changed
		t.mu.Unlock()
		if timer == nil {
			tm := time.NewTimer(wait)
			defer tm.Stop()
			timer = tm.C
		}
		select {
		case <-changed:
		case <-timer:
			expired = true // answer with what there is
		case <-ctx.Done():
			return core.TerminalOutput{}, fmt.Errorf("wait for terminal output: %w", ctx.Err())
		}
	}
}

// Write sends input to the terminal's standard input.
func (s *Service) Write(ctx context.Context, sessionID, id, input string) error {
	t, err := s.find(sessionID, id)
	if err != nil {
		return err
	}
	if len(input) > MaxInputBytes {
		return core.Errorf(core.CodeBadInput, "input is %d bytes; at most %d per write", len(input), MaxInputBytes)
	}
	if !t.isRunning() {
		return core.Errorf(core.CodeConflict, "terminal %s has ended: its input is closed", id)
	}
	t.inMu.Lock()
	defer t.inMu.Unlock()
	done := make(chan error, 1)
	go func() { _, err := io.WriteString(t.proc.Input(), input); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			return core.Errorf(core.CodeConflict, "terminal %s does not take input (it may have ended or closed its input)", id)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("write to terminal %s: %w", id, ctx.Err())
	case <-t.done:
		return core.Errorf(core.CodeConflict, "terminal %s ended before it read the input", id)
	}
}

// signals are the signals a terminal may be sent: each ends it.
var signals = []string{"KILL", "TERM", "INT", "HUP", "QUIT"}

// Kill sends signal (default KILL) to the terminal; for KILL it waits for
// the terminal to end. Killing an ended terminal returns it unchanged.
func (s *Service) Kill(ctx context.Context, sessionID, id, signal string) (core.Terminal, error) {
	t, err := s.find(sessionID, id)
	if err != nil {
		return core.Terminal{}, err
	}
	signal = strings.TrimPrefix(strings.ToUpper(cmp.Or(signal, "KILL")), "SIG")
	if !slices.Contains(signals, signal) {
		return core.Terminal{}, core.Errorf(core.CodeBadInput, "signal %q: use KILL, TERM, INT, HUP or QUIT", signal)
	}
	if !t.isRunning() {
		return t.snapshot(), nil
	}
	t.mu.Lock()
	t.killed = true
	t.mu.Unlock()
	if err := t.proc.Signal(signal); err != nil {
		return core.Terminal{}, err
	}
	if signal == "KILL" {
		if err := waitEnd(ctx, t); err != nil {
			return core.Terminal{}, err
		}
		return t.snapshot(), nil
	}
	// A signal the terminal survives (one sent before its processes could
	// take it, or one it handles and ignores) is followed by KILL.
	go func() { // not in s.wg: it ends with the terminal, or 5 s later
		tm := time.NewTimer(killGrace)
		defer tm.Stop()
		select {
		case <-t.done:
		case <-tm.C:
			if err := t.proc.Signal("KILL"); err != nil {
				s.log.Warn("kill terminal after "+signal, "session_id", sessionID, "terminal_id", id, "err", err)
			}
		}
	}()
	return t.snapshot(), nil
}

func waitEnd(ctx context.Context, t *term) error {
	tm := time.NewTimer(killWait)
	defer tm.Stop()
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for terminal %s to end: %w", t.info.ID, ctx.Err())
	case <-tm.C:
		return core.Errorf(core.CodeUnavailable, "terminal %s did not end within %s of SIGKILL", t.info.ID, killWait)
	}
}

// List returns a session's terminals, oldest first.
func (s *Service) List(sessionID string) []core.Terminal {
	s.mu.Lock()
	ts := slices.Clone(s.bySession[sessionID])
	s.mu.Unlock()
	out := make([]core.Terminal, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.snapshot())
	}
	return out
}

// KillSession kills every running terminal of a session and waits for
// them; it returns how many it killed.
func (s *Service) KillSession(ctx context.Context, sessionID string) int {
	n := 0
	for _, info := range s.List(sessionID) {
		if info.Status != core.TerminalRunning {
			continue
		}
		if _, err := s.Kill(ctx, sessionID, info.ID, "KILL"); err != nil {
			s.log.Warn("kill terminal", "session_id", sessionID, "terminal_id", info.ID, "err", err)
			continue
		}
		n++
	}
	return n
}

// Forget kills the terminals of a deleted session, waits for them and
// forgets them; nothing more is recorded for them.
func (s *Service) Forget(sessionID string) {
	s.mu.Lock()
	ts := s.bySession[sessionID]
	delete(s.bySession, sessionID)
	s.mu.Unlock()
	for _, t := range ts {
		t.mu.Lock()
		t.forgotten, t.killed = true, true
		t.mu.Unlock()
		if !t.isRunning() {
			continue
		}
		if err := t.proc.Signal("KILL"); err != nil {
			s.log.Warn("kill terminal of a deleted session", "session_id", sessionID, "terminal_id", t.info.ID, "err", err)
		}
		_ = waitEnd(context.Background(), t)
	}
}

// Close kills every terminal (recording their end) and refuses new ones;
// the kernel calls it when it stops.
func (s *Service) Close(ctx context.Context) {
	s.mu.Lock()
	s.closed = true
	var ids [][2]string
	for sid, ts := range s.bySession {
		for _, t := range ts {
			if t.isRunning() {
				ids = append(ids, [2]string{sid, t.info.ID})
			}
		}
	}
	s.mu.Unlock()
	for _, id := range ids {
		if _, err := s.Kill(ctx, id[0], id[1], "KILL"); err != nil {
			s.log.Warn("kill terminal at stop", "session_id", id[0], "terminal_id", id[1], "err", err)
		}
	}
	s.wg.Wait()
}
