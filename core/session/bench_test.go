package session_test

import (
	"context"
	"sync"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/coretest"
)

// BenchmarkFanOut10 measures persisted events appended through the service
// and delivered to 10 live subscribers each.
func BenchmarkFanOut10(b *testing.B) {
	svc := newService(b, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := svc.CreateSession(ctx, core.CreateSessionInput{})
	if err != nil {
		b.Fatal(err)
	}
	const subs = 10
	var wg sync.WaitGroup
	target := int64(b.N) + 1
	for range subs {
		ch, err := svc.Subscribe(ctx, s.ID, nil)
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range ch {
				if ev.Seq == target {
					return
				}
			}
		}()
	}
	ev := coretest.MessageEvent(b, s.ID, core.RoleUser, "hello")
	b.ResetTimer()
	for range b.N {
		if _, err := svc.Append(ctx, s.ID, ev); err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
	b.ReportMetric(float64(b.N*subs)/b.Elapsed().Seconds(), "deliveries/s")
}
