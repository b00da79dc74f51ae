package acp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
)

func TestMCPInputs(t *testing.T) {
	raw := []json.RawMessage{
		json.RawMessage(`{"name":"fs","command":"/bin/fs","args":["-r"],"env":[{"name":"TOKEN","value":"v"}]}`),
		json.RawMessage(`{"type":"http","name":"web","url":"https://x/mcp","headers":[{"name":"Authorization","value":"Bearer t"}]}`),
		json.RawMessage(`{"type":"stdio","name":"bare","command":"/bin/bare","args":null,"env":null}`),
	}
	got, err := mcpInputs(raw)
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	want := []client.McpServerInput{
		{Name: "fs", Transport: client.McpTransportStdio, Command: str("/bin/fs"), Args: []string{"-r"}, Env: []client.KeyValueInput{{Key: "TOKEN", Value: "v"}}},
		{Name: "web", Transport: client.McpTransportHttp, Url: str("https://x/mcp"), Headers: []client.KeyValueInput{{Key: "Authorization", Value: "Bearer t"}}},
		{Name: "bare", Transport: client.McpTransportStdio, Command: str("/bin/bare"), Args: []string{}, Env: []client.KeyValueInput{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
	for in, msg := range map[string]string{
		`{"type":"sse","name":"s","url":"https://x/sse","headers":[]}`: "SSE",
		`{"type":"acp","name":"a","id":"x"}`:                           "unsupported MCP server type",
		`{"name":"","command":"/bin/x"}`:                               "name is required",
		`{"name":"x","command":""}`:                                    "command is required",
		`{"name":"x","args":"not a list"}`:                             "mcpServers[0]",
	} {
		_, err := mcpInputs([]json.RawMessage{json.RawMessage(in)})
		var re *rpcError
		if err == nil || !strings.Contains(err.Error(), msg) || !errorsAs(err, &re) || re.Code != codeInvalidParams {
			t.Errorf("%s: %v, want invalid params with %q", in, err, msg)
		}
	}
}

func errorsAs(err error, re **rpcError) bool {
	r, ok := err.(*rpcError)
	*re = r
	return ok
}

// FuzzMCPInputs: the client's mcpServers never panic the conversion, and an
// accepted server is always a STDIO one with a command or an HTTP one.
func FuzzMCPInputs(f *testing.F) {
	f.Add(`[{"name":"fs","command":"/bin/fs","args":[],"env":[]}]`)
	f.Add(`[{"type":"http","name":"w","url":"https://x","headers":[{"name":"a","value":"b"}]}]`)
	f.Add(`[{"type":"sse","name":"s","url":"u","headers":[]}]`)
	f.Add(`[null, 1, "x"]`)
	f.Fuzz(func(t *testing.T, s string) {
		var raw []json.RawMessage
		if json.Unmarshal([]byte(s), &raw) != nil {
			return
		}
		out, err := mcpInputs(raw)
		if err != nil {
			return
		}
		for _, in := range out {
			switch in.Transport {
			case client.McpTransportStdio:
				if in.Command == nil || *in.Command == "" {
					t.Fatalf("STDIO without a command: %+v", in)
				}
			case client.McpTransportHttp:
			default:
				t.Fatalf("transport %v", in.Transport)
			}
		}
	})
}
