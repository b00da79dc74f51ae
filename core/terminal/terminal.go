// Package terminal owns a kernel's background terminals: long-running
// commands a session starts (the model's terminal_* tools, or a client)
// that outlive the call and the turn that started them. Each keeps its
// output in a bounded buffer (older output dropped and counted), records
// terminal_started and terminal_exited in its session's log, publishes new
// output live (terminal_output, never stored) and stores the last part of
// its output as an artifact when it ends. The processes come from a
// core.TerminalLauncher (plugins/terminal: the bash tool's sandbox).
package terminal

import (
	"cmp"
	"context"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
)

// Defaults of Config.
const (
	DefaultBufferBytes = 1 << 20
	DefaultPerSession  = 8
	DefaultKernelWide  = 64
	// DefaultReadBytes bounds one read unless the caller asks for less.
	DefaultReadBytes = 64 << 10
	// MaxReadBytes bounds one read whatever the caller asks.
	MaxReadBytes = 1 << 20
	// MaxWait bounds how long a read waits for new output.
	MaxWait = 10 * time.Second
	// MaxInputBytes bounds one write to a terminal's input.
	MaxInputBytes = 64 << 10
	// MaxCommandBytes bounds a terminal's command line.
	MaxCommandBytes = 16 << 10
	// keepEnded is how many ended terminals a session keeps listed.
	keepEnded = 32
	// killWait bounds how long a kill waits for the terminal to end.
	killWait = 10 * time.Second
	// killGrace is how long a terminal has to end after a signal other
	// than KILL before it gets KILL.
	killGrace = 5 * time.Second
)

// Config is what the service needs.
type Config struct {
	Launcher core.TerminalLauncher
	Sessions *session.Service
	// Blobs keeps the last part of each terminal's output at its end; nil
	// keeps none.
	Blobs  core.BlobStore
	Logger *slog.Logger
	// BufferBytes is the output kept per terminal (default 1 MiB).
	BufferBytes int
	// PerSession and KernelWide bound the running terminals (defaults 8
	// and 64).
	PerSession, KernelWide int
}

// Service runs and tracks terminals; it implements core.Terminals.
type Service struct {
	cfg Config
	log *slog.Logger

	mu        sync.Mutex
	bySession map[string][]*term
	// starting counts each session's terminals between reserve and their
	// listing, so that concurrent starts cannot pass the session's limit.
	starting map[string]int
	running  int
	closed   bool
	wg       sync.WaitGroup
}

var _ core.Terminals = (*Service)(nil)

// New returns the service.
func New(cfg Config) *Service {
	cfg.BufferBytes = cmp.Or(cfg.BufferBytes, DefaultBufferBytes)
	cfg.PerSession = cmp.Or(cfg.PerSession, DefaultPerSession)
	cfg.KernelWide = cmp.Or(cfg.KernelWide, DefaultKernelWide)
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Service{cfg: cfg, log: log, bySession: map[string][]*term{}, starting: map[string]int{}}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Start starts a terminal and returns it at once (RUNNING).
func (s *Service) Start(ctx context.Context, spec core.TerminalStart) (core.Terminal, error) {
	if err := checkStart(spec); err != nil {
		return core.Terminal{}, err
	}
	if _, err := s.cfg.Sessions.Session(ctx, spec.SessionID); err != nil {
		return core.Terminal{}, err
	}
	if err := s.reserve(spec.SessionID); err != nil {
		return core.Terminal{}, err
	}
	proc, err := s.cfg.Launcher.StartTerminal(ctx, spec)
	if err != nil {
		s.release(spec.SessionID, true)
		s.log.Warn("start terminal", "session_id", spec.SessionID, "err", err)
		return core.Terminal{}, &core.Error{Code: core.CodeUnavailable, Message: "the terminal could not start: " + err.Error(), Err: err}
	}
	t := &term{
		info: core.Terminal{ID: core.NewID("term"), SessionID: spec.SessionID, Command: spec.Command, Cwd: spec.Dir,
			Status: core.TerminalRunning, StartedAt: time.Now().UTC(), ToolCallID: spec.ToolCallID},
		ring: newRing(s.cfg.BufferBytes), changed: make(chan struct{}), done: make(chan struct{}), proc: proc,
	}
	s.mu.Lock()
	s.unmarkStarting(spec.SessionID)
	if s.closed {
		// The kernel began stopping while it started: it never runs.
		s.running--
		s.mu.Unlock()
		_ = proc.Signal("KILL")
		_, _ = proc.Wait()
		return core.Terminal{}, core.Errorf(core.CodeUnavailable, "the kernel is stopping: no new terminal")
	}
	s.bySession[spec.SessionID] = append(s.bySession[spec.SessionID], t)
	s.wg.Add(2) // under mu: Close's Wait comes after every Add
	s.mu.Unlock()
	s.record(spec.SessionID, core.EventTerminalStarted, core.TerminalStartedPayload{Terminal: t.snapshot()})
	s.log.Info("terminal started", "session_id", spec.SessionID, "terminal_id", t.info.ID, "cwd", spec.Dir)
	pumped := make(chan struct{})
	go func() {
		defer s.wg.Done()
		defer close(pumped)
		s.pump(t)
	}()
	go func() {
		defer s.wg.Done()
		s.await(t, pumped)
	}()
	return t.snapshot(), nil
}

func checkStart(spec core.TerminalStart) error {
	switch {
	case strings.TrimSpace(spec.Command) == "":
		return core.Errorf(core.CodeBadInput, "command is empty: give the command line to run")
	case len(spec.Command) > MaxCommandBytes:
		return core.Errorf(core.CodeBadInput, "command is %d bytes; at most %d", len(spec.Command), MaxCommandBytes)
	case spec.Dir == "" || spec.ScopeDir == "":
		return core.Errorf(core.CodeBadInput, "the session has no working directory")
	}
	for k := range spec.Env {
		if !envName.MatchString(k) {
			return core.Errorf(core.CodeBadInput, "env name %q: use letters, digits and _ (not starting with a digit)", k)
		}
	}
	return nil
}

// reserve takes one running slot of the session and of the kernel.
func (s *Service) reserve(sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return core.Errorf(core.CodeUnavailable, "the kernel is stopping: no new terminal")
	}
	n := s.starting[sessionID]
	for _, t := range s.bySession[sessionID] {
		if t.isRunning() {
			n++
		}
	}
	if n >= s.cfg.PerSession {
		return core.Errorf(core.CodeConflict, "session %s already runs %d terminals (the limit): kill one (terminal_kill or killTerminal) first", sessionID, n)
	}
	if s.running >= s.cfg.KernelWide {
		return core.Errorf(core.CodeUnavailable, "the kernel already runs %d terminals (its limit): kill one first", s.running)
	}
	s.running++
	s.starting[sessionID]++
	return nil
}

// release gives a running slot back (and the session's starting mark
// when the terminal never started).
func (s *Service) release(sessionID string, starting bool) {
	s.mu.Lock()
	s.running--
	if starting {
		s.unmarkStarting(sessionID)
	}
	s.mu.Unlock()
}

// unmarkStarting ends one start of the session; s.mu is held.
func (s *Service) unmarkStarting(sessionID string) {
	if s.starting[sessionID]--; s.starting[sessionID] <= 0 {
		delete(s.starting, sessionID)
	}
}

// pump copies the terminal's output into its buffer and publishes it live.
func (s *Service) pump(t *term) {
	buf := make([]byte, 32<<10)
	out := t.proc.Output()
	for {
		n, err := out.Read(buf)
		if n > 0 {
			t.mu.Lock()
			off := t.ring.total
			t.ring.write(buf[:n])
			t.info.OutputBytes, t.info.DroppedBytes = t.ring.total, t.ring.dropped()
			t.broadcast()
			forgotten := t.forgotten
			t.mu.Unlock()
			if !forgotten {
				s.emit(t, off, buf[:n])
			}
		}
		if err != nil {
			return
		}
	}
}

// emit publishes new output to the session's subscribers, if any.
func (s *Service) emit(t *term, off int64, p []byte) {
	if !s.cfg.Sessions.Broker().HasSubscribers(t.info.SessionID) {
		return
	}
	s.cfg.Sessions.Emit(t.info.SessionID, core.EventTerminalOutput, core.TerminalOutputPayload{
		TerminalID: t.info.ID, Offset: off, Text: strings.ToValidUTF8(string(p), "\uFFFD")})
}

// await waits for the terminal's end, records it and frees its slot.
func (s *Service) await(t *term, pumped <-chan struct{}) {
	code, err := t.proc.Wait()
	<-pumped
	if err != nil {
		s.log.Warn("wait for terminal", "session_id", t.info.SessionID, "terminal_id", t.info.ID, "err", err)
	}
	now := time.Now().UTC()
	t.mu.Lock()
	t.info.EndedAt = &now
	t.info.ExitCode = &code
	t.info.Status = core.TerminalExited
	if t.killed {
		// Its own code, if any, is the sandbox helper's answer to the
		// signal: say it was a signal.
		t.info.Status, t.info.ExitCode = core.TerminalKilled, ptr(-1)
	}
	forgotten := t.forgotten
	var last []byte
	if !forgotten {
		last = slices.Clone(t.ring.window())
	}
	info := t.info
	t.broadcast()
	t.mu.Unlock()
	s.release(info.SessionID, false)
	if !forgotten {
		p := core.TerminalExitedPayload{Terminal: info, OutputSHA256: s.keepOutput(t, last)}
		s.record(info.SessionID, core.EventTerminalExited, p)
	}
	close(t.done)
	s.prune(info.SessionID)
	s.log.Info("terminal ended", "session_id", info.SessionID, "terminal_id", info.ID, "status", info.Status, "exit_code", code, "output_bytes", info.OutputBytes, "dropped_bytes", info.DroppedBytes)
}

// keepOutput stores the last part of a terminal's output as an artifact
// and returns its hash ("" when there is none or no store).
func (s *Service) keepOutput(t *term, last []byte) string {
	if s.cfg.Blobs == nil || len(last) == 0 {
		return ""
	}
	hash, _, err := s.cfg.Blobs.Put(context.Background(), strings.NewReader(string(last)), 0)
	if err != nil {
		s.log.Warn("keep terminal output", "session_id", t.info.SessionID, "terminal_id", t.info.ID, "err", err)
		return ""
	}
	return hash
}

// record appends a persisted terminal event; a deleted session is not an
// error.
func (s *Service) record(sessionID string, typ core.EventType, payload any) {
	ev, err := core.NewEvent(sessionID, typ, payload)
	if err == nil {
		_, err = s.cfg.Sessions.Append(context.Background(), sessionID, ev)
	}
	if err != nil && core.ErrorCode(err) != core.CodeNotFound {
		s.log.Warn("record terminal event", "session_id", sessionID, "type", typ, "err", err)
	}
}

// prune drops the oldest ended terminals of a session beyond keepEnded.
func (s *Service) prune(sessionID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.bySession[sessionID]
	ended := 0
	for _, t := range ts {
		if !t.isRunning() {
			ended++
		}
	}
	for i := 0; i < len(ts) && ended > keepEnded; {
		if !ts[i].isRunning() {
			ts = slices.Delete(ts, i, i+1)
			ended--
			continue
		}
		i++
	}
	if len(ts) == 0 {
		delete(s.bySession, sessionID)
		return
	}
	s.bySession[sessionID] = ts
}

func ptr[T any](v T) *T { return &v }
