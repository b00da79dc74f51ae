//go:build linux

package terminal_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/pubsub"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/core/terminal"
	"github.com/foya-dev/foya/plugins/sandbox"
	plterminal "github.com/foya-dev/foya/plugins/terminal"
	"github.com/foya-dev/foya/storage"
)

func TestMain(m *testing.M) {
	sandbox.MaybeHelper() // terminals run confined under the test binary as helper
	os.Exit(m.Run())
}

// harness is a terminal service over a real SQLite store and the real
// sandboxed launcher, with one session.
type harness struct {
	svc   *session.Service
	terms *terminal.Service
	sid   string
	dir   string
}

func newHarness(t testing.TB, cfg terminal.Config) *harness {
	t.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(t.TempDir(), "foya.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := slog.New(slog.DiscardHandler)
	svc, err := session.New(session.Config{Store: db, Broker: pubsub.New(pubsub.Config{Logger: log}), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	s, err := svc.CreateSession(ctx, core.CreateSessionInput{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Sessions, cfg.Logger = svc, log
	cfg.Launcher = plterminal.New(plterminal.Config{TempRoot: t.TempDir(), Limits: sandbox.DefaultLimits(), Logger: log})
	terms := terminal.New(cfg)
	t.Cleanup(func() { terms.Close(context.Background()) })
	return &harness{svc: svc, terms: terms, sid: s.ID, dir: t.TempDir()}
}

func (h *harness) start(t testing.TB, command string) core.Terminal {
	t.Helper()
	tm, err := h.terms.Start(context.Background(), core.TerminalStart{SessionID: h.sid, Command: command, Dir: h.dir, ScopeDir: h.dir})
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestServiceReadWaitsWritesAndKills(t *testing.T) {
	h := newHarness(t, terminal.Config{PerSession: 2})
	ctx := context.Background()
	tm := h.start(t, `echo "cwd=$PWD"; while read -r l; do echo "got $l"; done`)
	out, err := h.terms.Read(ctx, h.sid, tm.ID, 0, 0, 10*time.Second)
	if err != nil || out.Text != "cwd="+h.dir+"\n" || out.Terminal.Status != core.TerminalRunning {
		t.Fatalf("first read: %+v %v", out, err)
	}
	if err := h.terms.Write(ctx, h.sid, tm.ID, "x\n"); err != nil {
		t.Fatal(err)
	}
	out, err = h.terms.Read(ctx, h.sid, tm.ID, out.NextOffset, 0, 10*time.Second)
	if err != nil || out.Text != "got x\n" {
		t.Fatalf("read after the write: %+v %v", out, err)
	}
	// Nothing new: a short wait answers empty.
	if again, err := h.terms.Read(ctx, h.sid, tm.ID, out.NextOffset, 0, 50*time.Millisecond); err != nil || again.Text != "" || again.NextOffset != out.NextOffset {
		t.Fatalf("read with nothing new: %+v %v", again, err)
	}
	if _, err := h.terms.Read(ctx, h.sid, tm.ID, out.NextOffset+1, 0, 0); core.ErrorCode(err) != core.CodeBadInput {
		t.Fatalf("read past the end: %v", err)
	}
	h.start(t, "sleep 30")
	if _, err := h.terms.Start(ctx, core.TerminalStart{SessionID: h.sid, Command: "sleep 30", Dir: h.dir, ScopeDir: h.dir}); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("a third terminal with PerSession 2: %v", err)
	}
	killed, err := h.terms.Kill(ctx, h.sid, tm.ID, "")
	if err != nil || killed.Status != core.TerminalKilled || killed.EndedAt == nil {
		t.Fatalf("kill: %+v %v", killed, err)
	}
	if err := h.terms.Write(ctx, h.sid, tm.ID, "late\n"); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("write after the kill: %v", err)
	}
	if n := h.terms.KillSession(ctx, h.sid); n != 1 {
		t.Fatalf("KillSession killed %d, want 1", n)
	}
	evs, err := h.svc.Events(ctx, h.sid, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		if strings.HasPrefix(string(e.Type), "terminal_") {
			types = append(types, string(e.Type))
		}
	}
	if strings.Join(types, ",") != "terminal_started,terminal_started,terminal_exited,terminal_exited" {
		t.Fatalf("events %v", types)
	}
}

func TestServiceExitCodeAndTERM(t *testing.T) {
	h := newHarness(t, terminal.Config{})
	ctx := context.Background()
	h.start(t, "echo bye; exit 3")
	deadline := time.Now().Add(10 * time.Second)
	for h.terms.List(h.sid)[0].Status == core.TerminalRunning {
		if time.Now().After(deadline) {
			t.Fatal("the terminal did not end")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := h.terms.List(h.sid)[0]; got.Status != core.TerminalExited || got.ExitCode == nil || *got.ExitCode != 3 || got.OutputBytes != 4 {
		t.Fatalf("after exit 3: %+v", got)
	}
	tm := h.start(t, "echo up; sleep 30")
	if out, err := h.terms.Read(ctx, h.sid, tm.ID, 0, 0, 10*time.Second); err != nil || out.Text != "up\n" {
		t.Fatalf("read: %+v %v", out, err)
	}
	if _, err := h.terms.Kill(ctx, h.sid, tm.ID, "TERM"); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for h.terms.List(h.sid)[1].Status == core.TerminalRunning {
		if time.Now().After(deadline) {
			t.Fatal("TERM did not end the terminal")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := h.terms.List(h.sid)[1]; got.Status != core.TerminalKilled {
		t.Fatalf("after TERM: %+v", got)
	}
	if got, err := h.terms.Kill(ctx, h.sid, tm.ID, "INT"); err != nil || got.Status != core.TerminalKilled || *got.ExitCode != -1 {
		t.Fatalf("killing an ended terminal: %+v %v", got, err)
	}
	tm = h.start(t, "sleep 30")
	if _, err := h.terms.Kill(ctx, h.sid, tm.ID, "USR1"); core.ErrorCode(err) != core.CodeBadInput {
		t.Fatalf("an unknown signal: %v", err)
	}
}

func TestServiceKernelWideLimitAndForget(t *testing.T) {
	h := newHarness(t, terminal.Config{KernelWide: 1})
	ctx := context.Background()
	tm := h.start(t, "sleep 30")
	_, err := h.terms.Start(ctx, core.TerminalStart{SessionID: h.sid, Command: "sleep 30", Dir: h.dir, ScopeDir: h.dir})
	if core.ErrorCode(err) != core.CodeUnavailable || !strings.Contains(err.Error(), "its limit") {
		t.Fatalf("a second terminal with KernelWide 1: %v", err)
	}
	if _, err := h.terms.Start(ctx, core.TerminalStart{SessionID: h.sid, Command: " ", Dir: h.dir, ScopeDir: h.dir}); core.ErrorCode(err) != core.CodeBadInput {
		t.Fatalf("an empty command: %v", err)
	}
	if _, err := h.terms.Start(ctx, core.TerminalStart{SessionID: h.sid, Command: "true", Dir: h.dir, ScopeDir: h.dir, Env: map[string]string{"A=B": "x"}}); core.ErrorCode(err) != core.CodeBadInput {
		t.Fatalf("a bad env name: %v", err)
	}
	h.terms.Forget(h.sid) // the session was deleted: killed, forgotten, nothing recorded
	if ts := h.terms.List(h.sid); len(ts) != 0 {
		t.Fatalf("terminals after Forget: %+v", ts)
	}
	if _, err := h.terms.Read(ctx, h.sid, tm.ID, 0, 0, 0); core.ErrorCode(err) != core.CodeNotFound {
		t.Fatalf("read after Forget: %v", err)
	}
	// Its slot is free again.
	h.start(t, "true")
	evs, err := h.svc.Events(ctx, h.sid, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == core.EventTerminalExited {
			var p core.TerminalExitedPayload
			_ = e.Decode(&p)
			if p.Terminal.ID == tm.ID {
				t.Fatalf("a forgotten terminal recorded its end: %+v", p)
			}
		}
	}
}
