//go:build linux

package terminal_test

import (
	"context"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/terminal"
)

// The latency of new terminal output: a byte written to a confined `cat`
// terminal's input comes back as output, and the benchmark measures from
// the write until a reader sees it: a terminal_read waiting for it
// (ReadWaiter), or a subscriber of the session's events receiving the live
// terminal_output event (Subscriber). Both include the trip through cat.
func BenchmarkTerminalOutputLatency(b *testing.B) {
	h := newHarness(b, terminal.Config{})
	ctx := context.Background()
	tm := h.start(b, "cat")
	var off int64 // the terminal's output so far: every run reads on from it

	b.Run("ReadWaiter", func(b *testing.B) {
		for b.Loop() {
			if err := h.terms.Write(ctx, h.sid, tm.ID, "x"); err != nil {
				b.Fatal(err)
			}
			out, err := h.terms.Read(ctx, h.sid, tm.ID, off, 0, 10*time.Second)
			if err != nil || out.Text != "x" {
				b.Fatalf("read: %+v %v", out, err)
			}
			off = out.NextOffset
		}
	})

	b.Run("Subscriber", func(b *testing.B) {
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		events, err := h.svc.Subscribe(sctx, h.sid, nil)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := h.terms.Write(ctx, h.sid, tm.ID, "y"); err != nil {
				b.Fatal(err)
			}
			for ev := range events {
				if ev.Type == core.EventTerminalOutput {
					var p core.TerminalOutputPayload
					if err := ev.Decode(&p); err != nil {
						b.Fatal(err)
					}
					off = p.Offset + int64(len(p.Text))
					break
				}
			}
		}
	})
}
