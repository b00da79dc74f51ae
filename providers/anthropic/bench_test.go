package anthropic

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkReadStream parses a recorded Messages stream: 200 thinking
// deltas, a signature, 1000 text deltas and usage.
func BenchmarkReadStream(b *testing.B) {
	var s strings.Builder
	s.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":900}}}\n\n")
	s.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&s, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"step %d \"}}\n\n", i)
	}
	s.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCkgIARABGAIiQL\"}}\n\n")
	s.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	s.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&s, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"word%d \"}}\n\n", i)
	}
	s.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n")
	s.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1200}}\n\n")
	s.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	raw := s.String()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := readStream(context.Background(), strings.NewReader(raw), &rec{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(1206*b.N)/b.Elapsed().Seconds(), "events/s")
}
