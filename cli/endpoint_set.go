package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/cmdutil"
)

// connectionsSet changes a connection's name, base URL or key. A key is
// bound to its endpoint: moving the base URL to another scheme, host or
// port needs --api-key-env or --api-key-stdin in the same command (the
// kernel refuses it otherwise, and this command says which flag to add).
func connectionsSet(r *runner) error {
	if err := refuseKeyOnCommandLine(r.args); err != nil {
		return err
	}
	fs := r.fs
	name := fs.String("name", "", "new display name")
	baseURL := fs.String("base-url", "", "new base URL; another origin (scheme, host, port) needs the key again: --api-key-env or --api-key-stdin")
	keyEnv := fs.String("api-key-env", "", "read the key from this environment variable OF THE KERNEL at call time (stored as env:NAME)")
	keyStdin := fs.Bool("api-key-stdin", false, "read the key from the first line of stdin")
	noKey := fs.Bool("no-api-key", false, "remove the key (an endpoint without authentication)")
	rest, err := r.parse()
	if err != nil {
		return err
	}
	n := 0
	for _, set := range []bool{*keyEnv != "", *keyStdin, *noKey} {
		if set {
			n++
		}
	}
	if n > 1 {
		return cmdutil.UsageError{Err: errors.New("use one of --api-key-env, --api-key-stdin and --no-api-key")}
	}
	in := client.ConnectionInput{}
	if *name != "" {
		in.Name = name
	}
	if *baseURL != "" {
		in.BaseUrl = baseURL
	}
	switch {
	case *keyEnv != "":
		in.ApiKey = ptr("env:" + *keyEnv)
	case *noKey:
		in.ApiKey = ptr("")
	case *keyStdin:
		key, err := keyFromStdin(r.stdin)
		if err != nil {
			return err
		}
		in.ApiKey = &key
	}
	if in.Name == nil && in.BaseUrl == nil && in.ApiKey == nil {
		return cmdutil.UsageError{Err: errors.New("connections set: nothing to change (give --name, --base-url or a key flag)")}
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		cn, err := resolveConnection(ctx, c, rest[0])
		if err != nil {
			return err
		}
		resp, err := client.UpdateConnection(ctx, c, cn.Id, in)
		if err != nil {
			if strings.Contains(err.Error(), "input.apiKey: required when baseUrl moves") {
				return fmt.Errorf("%w\nthe connection is unchanged; give its key for the new endpoint in the same command: --api-key-env NAME or --api-key-stdin", err)
			}
			return err
		}
		out := resp.UpdateConnection.ConnectionFields
		if r.cf.json {
			return printJSON(r.stdout, out)
		}
		return connectionsTable(r.stdout, []client.ConnectionFields{out}, nil)
	})
}

// mcpSet changes an MCP server's URL or headers. Headers are bound to the
// URL's origin: another scheme, host or port needs --header (or
// --no-headers) in the same command.
func mcpSet(r *runner) error {
	headers := &kvFlag{name: "header"}
	fs := r.fs
	fs.Var(headers, "header", "K=V header of an HTTP server (repeatable; replaces all headers; the value is stored, never printed)")
	noHeaders := fs.Bool("no-headers", false, "remove every header")
	url := fs.String("url", "", "new Streamable HTTP endpoint; another origin (scheme, host, port) needs --header or --no-headers again")
	rest, err := r.parse()
	if err != nil {
		return err
	}
	if len(headers.bad) > 0 {
		return cmdutil.UsageError{Err: fmt.Errorf("--header: %s is not KEY=VALUE", strings.Join(headers.bad, ", "))}
	}
	if *noHeaders && len(headers.kvs) > 0 {
		return cmdutil.UsageError{Err: errors.New("use either --header or --no-headers")}
	}
	if *url == "" && len(headers.kvs) == 0 && !*noHeaders {
		return cmdutil.UsageError{Err: errors.New("mcp set: nothing to change (give --url, --header or --no-headers)")}
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		s, err := resolveMCP(ctx, c, rest[0])
		if err != nil {
			return err
		}
		if s.Transport != client.McpTransportHttp {
			return cmdutil.UsageError{Err: fmt.Errorf("mcp set: %s is a %s server; --url and --header apply to HTTP servers", s.Name, s.Transport)}
		}
		in := client.McpServerInput{Name: s.Name, Transport: s.Transport}
		if *url != "" {
			in.Url = url
		}
		switch {
		case *noHeaders:
			in.Headers = []client.KeyValueInput{}
		case len(headers.kvs) > 0:
			in.Headers = headers.kvs
		}
		resp, err := client.UpdateMcpServer(ctx, c, s.Id, in)
		if err != nil {
			if strings.Contains(err.Error(), "input.headers: required when url moves") {
				return fmt.Errorf("%w\nthe server is unchanged; give its headers for the new origin in the same command: --header K=V (or --no-headers)", err)
			}
			return err
		}
		out := resp.UpdateMcpServer.McpServerFields
		if r.cf.json {
			return printJSON(r.stdout, out)
		}
		return mcpTable(r.stdout, []client.McpServerFields{out})
	})
}
