package e2e

import (
	"context"
	"testing"
	"time"
)

// BenchmarkTurnCPU measures what a short turn costs the machine, apart
// from the wall time the other benchmarks measure: the CPU the kernel and
// its plugin processes spend on one whole turn. Each turn is the first of
// a new session, as a client starts one (createSession, a graphql-ws
// subscription that replays from the start, sendMessage, a one-chunk
// reply, turn_finished). /proc counts CPU in ticks of 10 ms, so take a few
// hundred turns:
//
//	go test -run '^$' -bench TurnCPU -benchtime 400x ./test/e2e
//
// -kernel-cpuprofile FILE profiles the kernel across such turns.
func BenchmarkTurnCPU(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	prov := newBenchProvider(b, 1, 0, false)
	k, pprofAddr := startBenchKernel(b)
	k.chatSession(b, prov.baseURL()) // the connection; its session is not used
	const sub = `subscription($s: ID!) { sessionEvents(sessionId: $s, afterSeq: 0) { seq type delta message { role text } } }`
	turn := func() {
		sid := k.chatSession2(b)
		ws, err := dialSub(ctx, k.addr, sub, map[string]any{"s": sid})
		if err != nil {
			b.Fatal(err)
		}
		defer ws.close()
		// (no text to compare: a delta that comes while the replay
		// catches up is not sent, the message_end is)
		if _, err := viaKernel(ctx, k, b, sid, ws, ""); err != nil {
			b.Fatal(err)
		}
	}
	turn() // the plugin started, the connections made
	if pprofAddr != "" && *kernelCPUProfile != "" {
		profileKernel(ctx, b, pprofAddr, *kernelCPUProfile, turn)
	}
	pid := k.cmd.Process.Pid
	kernel0, plugins0 := processCPU(pid), childrenCPU(pid)
	b.ResetTimer()
	for range b.N {
		turn()
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU(pid)-kernel0).Microseconds())/float64(b.N), "kernel-cpu-µs/turn")
	b.ReportMetric(float64((childrenCPU(pid)-plugins0).Microseconds())/float64(b.N), "plugins-cpu-µs/turn")
}
