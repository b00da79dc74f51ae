package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/foya-dev/foya/plugins/sdk"
)

// testTools is a tool plugin for turn tests, served over real gRPC.
type testTools struct {
	calls atomic.Int64
}

var objectSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)

func (t *testTools) Describe(context.Context) (sdk.ToolSetInfo, error) {
	return sdk.ToolSetInfo{Version: "test", Tools: []sdk.Tool{
		{Name: "lookup", Description: "Looks something up.", Schema: objectSchema, ReadOnly: true},
		{Name: "note", Description: "Writes a note.", Schema: objectSchema},
		{Name: "fail", Description: "Always fails.", Schema: objectSchema, ReadOnly: true},
		{Name: "slow", Description: "Runs until cancelled.", Schema: objectSchema, ReadOnly: true},
		{Name: "big", Description: "Returns a very large result.", Schema: objectSchema, ReadOnly: true},
		{Name: "broken", Description: "Cannot run at all.", Schema: objectSchema, ReadOnly: true},
	}}, nil
}

func (t *testTools) Call(ctx context.Context, req sdk.ToolCallRequest) (sdk.ToolResult, error) {
	t.calls.Add(1)
	var in struct{ Q string }
	_ = json.Unmarshal(req.Input, &in)
	switch req.Name {
	case "lookup":
		return sdk.ToolResult{Text: "found: " + in.Q}, nil
	case "note":
		return sdk.ToolResult{Text: "noted: " + in.Q}, nil
	case "fail":
		return sdk.ToolResult{Text: "lookup backend exploded", IsError: true}, nil
	case "big":
		return sdk.ToolResult{Text: BigResult}, nil
	case "broken":
		return sdk.ToolResult{}, errors.New("the tool's backend is gone")
	case "slow":
		<-ctx.Done()
		return sdk.ToolResult{}, ctx.Err()
	}
	return sdk.ToolResult{Text: "unknown", IsError: true}, nil
}

// BigResult is 60,000 characters with recognisable landmarks.
var BigResult = "HEAD-LANDMARK " + strings.Repeat("0123456789", 3000) + " MIDDLE-LANDMARK " + strings.Repeat("abcdefghij", 2997) + " TAIL-LANDMARK"
