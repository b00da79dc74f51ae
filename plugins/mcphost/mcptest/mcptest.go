// Package mcptest is an MCP server built from the official Go SDK for the
// kernel's tests: the same server runs over stdio (as a child process) and
// over Streamable HTTP (on httptest).
//
// Tools: echo (read-only), note (not read-only), image (a PNG), fail
// (isError), structured (structuredContent), env (the names of its
// environment variables and whether MCPTEST_TOKEN is set), slow (blocks
// until cancelled, then records the cancellation), crash (the process exits
// mid-call), grow (adds the tool late, which sends list_changed) and ask
// (asks the user for a name: elicitation/create).
package mcptest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Observer receives what the HTTP server saw; all fields optional.
type Observer struct {
	mu        sync.Mutex
	Started   chan string // tool names of calls of slow that started
	Cancelled chan string // tool names whose call was cancelled
	Headers   []string    // the Authorization header of every tool call
}

// Headers returns the Authorization headers seen so far.
func (o *Observer) SeenHeaders() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.Headers)
}

// PNG is the image the image tool returns: 3×2 pixels.
func PNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

type textIn struct {
	Text string `json:"text" jsonschema:"the text"`
}

type noIn struct{}

type pathIn struct {
	Path string `json:"path"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true}

// NewServer builds the test server. markFile, when set, receives a line
// per cancelled call (for the stdio server, whose cancellations the test
// cannot see otherwise).
func NewServer(obs *Observer, markFile string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1"}, nil)
	addResultTools(s, obs)
	addCallTools(s, obs, markFile)
	addLifecycleTools(s)
	return s
}

// addResultTools adds the tools that return each kind of result: text,
// a picture, an error, structured content, the environment.
func addResultTools(s *mcp.Server, obs *Observer) {
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back.", Annotations: readOnly},
		func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			if obs != nil && req.Extra != nil && req.Extra.Header != nil {
				obs.mu.Lock()
				obs.Headers = append(obs.Headers, req.Extra.Header.Get("Authorization"))
				obs.mu.Unlock()
			}
			return text("echo: " + in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Writes a file (a path relative to the server's directory, or absolute) and says where the server runs."},
		func(ctx context.Context, req *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
			wd, _ := os.Getwd()
			res := "wrote"
			if err := os.WriteFile(in.Path, []byte("touched\n"), 0o644); err != nil {
				res = "error: " + err.Error()
			}
			return text("cwd=" + wd + " " + res), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "note", Description: "Write a note (changes state)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return text("noted: " + in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Return a picture.", Annotations: readOnly},
		func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "here is the picture"},
				&mcp.ImageContent{MIMEType: "image/png", Data: PNG()},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://caption", MIMEType: "text/plain", Text: "caption: a red dot"}},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails.", Annotations: readOnly},
		func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke: disk on fire"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "structured", Description: "Structured result.", Annotations: readOnly},
		func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"answer": 42}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Names of the environment variables.", Annotations: readOnly},
		func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			var keys []string
			for _, kv := range os.Environ() {
				keys = append(keys, strings.SplitN(kv, "=", 2)[0])
			}
			slices.Sort(keys)
			return text(fmt.Sprintf("keys=%s token_set=%t", strings.Join(keys, ","), os.Getenv("MCPTEST_TOKEN") == "s3cret-token")), nil, nil
		})
}

// addCallTools adds the tools that exercise how calls run: cancelled
// (slow), concurrent (pair) and asking the user (ask).
func addCallTools(s *mcp.Server, obs *Observer, markFile string) {
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Runs until cancelled.", Annotations: readOnly},
		func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			mark(markFile, "started slow")
			if obs != nil && obs.Started != nil {
				obs.Started <- "slow"
			}
			<-ctx.Done()
			mark(markFile, "cancelled slow")
			if obs != nil && obs.Cancelled != nil {
				obs.Cancelled <- "slow"
			}
			return nil, nil, ctx.Err()
		})
	// pair returns only once two calls of it run at the same time (or its
	// call is cancelled): proof that calls of one reply run concurrently.
	var pairMu sync.Mutex
	var waiting chan struct{}
	mcp.AddTool(s, &mcp.Tool{Name: "pair", Description: "Waits for a second concurrent call (not read-only)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			pairMu.Lock()
			if waiting == nil {
				ch := make(chan struct{})
				waiting = ch
				pairMu.Unlock()
				select {
				case <-ch:
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
			} else {
				close(waiting)
				waiting = nil
				pairMu.Unlock()
			}
			return text("paired " + in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the user for a name (elicitation) and returns the answer."},
		func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			// A multi round-trip request (protocol 2026-07-28); the SDK
			// sends it as elicitation/create to older clients.
			resp, ok := req.Params.InputResponses["name"]
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{
					"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"},
				}}}}, nil, nil
			}
			res, _ := resp.(*mcp.ElicitResult)
			if res == nil {
				return nil, nil, fmt.Errorf("no elicitation result")
			}
			return text(fmt.Sprintf("action=%s name=%v", res.Action, res.Content["name"])), nil, nil
		})
}

// addLifecycleTools adds the tools that change the server itself: crash
// exits the process, grow adds a tool.
func addLifecycleTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "The server process exits mid-call.", Annotations: readOnly},
		func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Adds the tool late.", Annotations: readOnly},
		func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "late", Description: "Added by grow.", Annotations: readOnly},
				func(ctx context.Context, req *mcp.CallToolRequest, in noIn) (*mcp.CallToolResult, any, error) {
					return text("late tool ran"), nil, nil
				})
			return text("grew"), nil, nil
		})
}

// ServeStdio runs the server on stdin/stdout until the client goes away.
// MCPTEST_MARK names the file that records cancellations.
// It records "pid N" there when it starts.
func ServeStdio() error {
	mark(os.Getenv("MCPTEST_MARK"), fmt.Sprintf("pid %d", os.Getpid()))
	return NewServer(nil, os.Getenv("MCPTEST_MARK")).Run(context.Background(), &mcp.StdioTransport{})
}

func mark(file, line string) {
	if file == "" {
		return
	}
	if f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		fmt.Fprintln(f, line)
		f.Close()
	}
}
