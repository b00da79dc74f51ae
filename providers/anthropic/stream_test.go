package anthropic

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
)

func events(evs ...string) string {
	var b strings.Builder
	for _, e := range evs {
		var h struct{ Type string }
		_ = json.Unmarshal([]byte(e), &h)
		b.WriteString("event: " + h.Type + "\ndata: " + e + "\n\n")
	}
	return b.String()
}

// stop_reason "refusal" is the finish reason refusal, with the
// explanation of stop_details.
func TestRefusalWithExplanation(t *testing.T) {
	r := &rec{}
	reason, err := readStream(context.Background(), strings.NewReader(events(
		`{"type":"message_start","message":{"model":"m","usage":{"input_tokens":18,"output_tokens":1}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"refusal","stop_details":{"type":"refusal","category":"cyber","explanation":"Blocked under the Usage Policy."}},"usage":{"output_tokens":5}}`,
		`{"type":"message_stop"}`,
	)), r)
	if err != nil || reason != sdk.FinishRefusal || r.RefusalOut != "Blocked under the Usage Policy." {
		t.Fatalf("%v %q %q", err, reason, r.RefusalOut)
	}
}

// The input of a tool the service runs (server_tool_use) is no tool call.
func TestServerToolUseIsNoToolCall(t *testing.T) {
	r := &rec{}
	reason, err := readStream(context.Background(), strings.NewReader(events(
		`{"type":"message_start","message":{"model":"m","usage":{"input_tokens":3}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"x\"}"}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Found."}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
		`{"type":"message_stop"}`,
	)), r)
	if err != nil || reason != "stop" || len(r.Calls) != 0 || r.TextOut.String() != "Found." {
		t.Fatalf("%v %q calls %+v text %q", err, reason, r.Calls, r.TextOut.String())
	}
}

func TestErrorEventShapes(t *testing.T) {
	for _, c := range []struct {
		ev  string
		cat sdk.ErrorCategory
		msg string
	}{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, sdk.CategoryThrottling, "Overloaded"},
		{`{"type":"error","error":{"details":null,"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`, sdk.CategoryRateLimit, "per-minute"},
		{`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`, sdk.CategoryContextOverflow, "prompt is too long"},
		{`{"type":"error","error":{"type":"billing_error","message":"Your credit balance is too low"}}`, sdk.CategoryQuota, "credit balance"},
		{`{"type":"error","message":"upstream connect error"}`, sdk.CategoryServer, "upstream connect error"},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":["x"]}}`, sdk.CategoryBadResponse, "unexpected content block"},
	} {
		_, err := readStream(context.Background(), strings.NewReader(events(`{"type":"message_start","message":{"model":"m","usage":{"input_tokens":3}}}`, c.ev)), &rec{})
		var e *sdk.Error
		if !asErr(err, &e) || e.Category != c.cat || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s: %v, want %s …%s…", c.ev, err, c.cat, c.msg)
		}
	}
}

// The recorded tool calls of the service's code execution (programmatic
// tool calling): the first call's whole input comes in its
// content_block_start with no input_json_delta; later calls come whole in
// message_start, and their message ends with no stop reason. Each is a
// tool call with its input, and the reply ends waiting for its result.
func TestStreamRecordedWholeToolCalls(t *testing.T) {
	raw, err := os.ReadFile("testdata/recorded/anthropic-programmatic-tool-calling.1.chunks.txt")
	if err != nil {
		t.Fatal(err)
	}
	var msgs [][]string
	var cur []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if cur = append(cur, l); strings.Contains(l, `"type":"message_stop"`) {
				msgs, cur = append(msgs, cur), nil
			}
		}
	}
	for i, want := range []string{`{"player": "player1"}`, `{"player": "player2"}`} {
		out := &rec{}
		reason, err := readStream(context.Background(), strings.NewReader(events(msgs[i]...)), out)
		if err != nil || reason != "tool_calls" {
			t.Fatalf("message %d: %v %q", i, err, reason)
		}
		var args strings.Builder
		for _, c := range out.Calls {
			args.WriteString(c.Arguments)
		}
		var got, exp any
		_ = json.Unmarshal([]byte(args.String()), &got)
		_ = json.Unmarshal([]byte(want), &exp)
		if len(out.Calls) == 0 || out.Calls[0].Name != "rollDie" || !reflect.DeepEqual(got, exp) {
			t.Fatalf("message %d calls %+v", i, out.Calls)
		}
	}
}
