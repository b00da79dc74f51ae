//go:build linux

package terminal

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/plugins/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.MaybeHelper()
	os.Exit(m.Run())
}

// Every allowed signal ends a confined terminal, and the exit code of a
// command that exits on its own is its own.
func TestSignalsEndTheTerminal(t *testing.T) {
	l := New(Config{TempRoot: t.TempDir(), Limits: sandbox.DefaultLimits(), Logger: slog.New(slog.DiscardHandler)})
	if !l.Confined() {
		t.Skip("no sandbox here")
	}
	dir := t.TempDir()
	for _, sig := range []string{"TERM", "INT", "HUP", "QUIT", "KILL"} {
		p, err := l.StartTerminal(context.Background(), core.TerminalStart{SessionID: "ses_x", Command: "echo up; sleep 30", Dir: dir, ScopeDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 3)
		if _, err := io.ReadFull(p.Output(), buf); err != nil || string(buf) != "up\n" {
			t.Fatalf("%s: output %q %v", sig, buf, err)
		}
		if err := p.Signal(sig); err != nil {
			t.Fatal(err)
		}
		done := make(chan int, 1)
		go func() { code, _ := p.Wait(); done <- code }()
		select {
		case code := <-done:
			if code != -1 {
				t.Errorf("%s: exit code %d, want -1", sig, code)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not end the terminal", sig)
		}
	}
	p, err := l.StartTerminal(context.Background(), core.TerminalStart{SessionID: "ses_x", Command: "exit 130", Dir: dir, ScopeDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(); code != 130 || err != nil {
		t.Fatalf("exit 130: %d %v", code, err)
	}
}
