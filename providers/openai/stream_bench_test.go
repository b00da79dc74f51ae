package openai

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
)

type discard struct{ n int }

func (d *discard) Text(s string) error              { d.n += len(s); return nil }
func (d *discard) Reasoning(s string) error         { d.n += len(s); return nil }
func (d *discard) ToolCall(sdk.ToolCallDelta) error { return nil }
func (d *discard) Usage(sdk.Usage) error            { return nil }
func (d *discard) State([]byte) error               { return nil }

// BenchmarkParseChunks is the plugin's CPU per streamed chunk: reading the
// SSE lines of a 2,000-chunk Chat Completions stream, decoding each chunk
// and merging the text (everything already buffered, as when the provider
// is faster than the plugin).
func BenchmarkParseChunks(b *testing.B) {
	var body bytes.Buffer
	for range 2000 {
		body.WriteString(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[{"index":0,"delta":{"content":"tok "},"finish_reason":null}]}` + "\n\n")
	}
	body.WriteString("data: [DONE]\n\n")
	raw := body.Bytes()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		d := &discard{}
		bt := &batcher{out: d}
		ds := &deltaState{out: bt, log: slog.New(slog.DiscardHandler)}
		err := readSSE(bytes.NewReader(raw), bt.flush, func(data []byte) error {
			if string(data) == "[DONE]" {
				return errStop
			}
			var c chatChunk
			if err := decodeChunk(data, &c); err != nil {
				return err
			}
			for _, ch := range c.Choices {
				if err := ds.forward(ch.Delta); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || bt.flush() != nil || d.n != len(strings.Repeat("tok ", 2000)) {
			b.Fatalf("err %v, %d bytes", err, d.n)
		}
	}
}
